import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileParamValidator } from './param-validator.ts';

test('a value outside an enum is refused with the values it may take', () => {
  const check = compileParamValidator({
    params: [{ name: 'options', required: true, schema: { type: 'object', properties: { tracer: { enum: ['callTracer', 'prestateTracer'] } } } }],
    result: {},
  });
  const e = check([{ tracer: 'callTrace' }]);
  assert.equal(e?.message, 'Invalid params: invalid argument 0 (options) at /tracer: must be equal to one of the allowed values ("callTracer", "prestateTracer")');
  assert.equal(check([{ tracer: 'callTracer' }]), undefined);
});
