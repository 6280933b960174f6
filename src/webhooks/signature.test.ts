import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signature, verifySignature } from './signature.ts';

test('a body signed as the bytes sent has the signature of the same body as text', () => {
  const body = JSON.stringify({ id: 'evt_1', event: { logs: ['é', '0x00'] } });
  const header = signature('whsec_x', Buffer.from(body), 1_700_000_000);
  assert.equal(header, signature('whsec_x', body, 1_700_000_000));
  assert.ok(verifySignature('whsec_x', body, header, 1_700_000_000));
});
