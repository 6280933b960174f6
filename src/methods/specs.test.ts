import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALLOWED_METHODS } from './allowed.ts';
import type { MethodSpec } from './method-spec.ts';
import { optionalBlockOf } from './param-validator.ts';
import { describe, EMBEDDED_EXTRA_METHODS, METHOD_SPECS, SOCKET_METHODS } from './specs.ts';

const CACHE = ['forever', 'head', 'never', 'block', 'txHash', 'traceTx'];
const SEEN = ['none', 'quantity', 'blockNumber', 'block', 'items'];
const ROUTES = ['any', 'designated', 'broadcast'];
const BLOCK_FORMS = ['number', 'hash', 'numberOrHash', 'filter'];
/** Methods the gateway answers itself: the filters (docs/decisions.md §8) and the subscriptions over a socket. */
const LOCAL = ['eth_newFilter', 'eth_newBlockFilter', 'eth_newPendingTransactionFilter', 'eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter', 'eth_subscribe', 'eth_unsubscribe'];

/** What is missing or inconsistent in a spec; empty when it is complete. */
function gaps(name: string, s: MethodSpec | undefined): string[] {
  if (!s) return [`${name}: no spec`];
  const out: string[] = [];
  const bad = (what: string) => out.push(`${name}: ${what}`);
  if (s.name !== name) bad(`registered under another name (${s.name})`);
  if (!Array.isArray(s.schema?.params) || typeof s.schema?.result !== 'object') bad('no params or result schema');
  if (!Number.isInteger(s.cost) || s.cost <= 0) bad(`cost ${s.cost}`);
  if (!CACHE.includes(s.cache)) bad(`cache rule ${s.cache}`);
  if (!SEEN.includes(s.seen)) bad(`seen rule ${s.seen}`);
  if (!ROUTES.includes(s.route)) bad(`route ${s.route}`);
  if (![false, 'raw', 'signed'].includes(s.write) || typeof s.local !== 'boolean' || typeof s.gasCapped !== 'boolean' || typeof s.trace !== 'boolean') {
    bad('write, local, gasCapped and trace must be said');
  }
  if (s.trace !== name.startsWith('debug_')) bad(`trace is ${s.trace}`);
  if (s.adapter !== undefined && typeof s.adapter !== 'function') bad('adapter is not a function');
  if (s.cache === 'block' && !s.block) bad("cache rule 'block' without a block parameter");
  if (s.block) {
    if (!BLOCK_FORMS.includes(s.block.by)) bad(`block form ${s.block.by}`);
    if (!(s.block.index >= 0 && s.block.index < s.schema.params.length)) bad(`block index ${s.block.index} outside its params`);
  }
  // The validator's `latest` default comes from the spec; a schema read alone (the fuzz test's oracle) must agree.
  const optional = s.block?.by === 'number' && s.block.optional ? s.block.index : undefined;
  if (optional !== optionalBlockOf(s.schema)?.index) bad(`spec says the block is optional at ${optional}, the schema at ${optionalBlockOf(s.schema)?.index}`);
  if (s.write && s.cache !== 'never') bad('a write is cached');
  if (s.local !== LOCAL.includes(name)) bad(`local is ${s.local}`);
  return out;
}

test('every allowed method has a complete spec', () => {
  assert.equal(ALLOWED_METHODS.length, 49);
  assert.deepEqual(ALLOWED_METHODS.flatMap((m) => gaps(m, METHOD_SPECS.get(m))), []);
});

test('a spec that is not on the allowed list is complete and says it is an extra or a socket method', () => {
  const extras = [...METHOD_SPECS.keys()].filter((m) => !ALLOWED_METHODS.includes(m));
  assert.deepEqual(extras, ['eth_getBlockReceipts', 'eth_subscribe', 'eth_unsubscribe']);
  for (const m of extras) {
    assert.deepEqual(gaps(m, METHOD_SPECS.get(m)), []);
    const spec = METHOD_SPECS.get(m)!;
    assert.ok(spec.extra || (spec.socket && spec.local), `${m} is marked extra, or a local socket method`);
  }
  assert.deepEqual(EMBEDDED_EXTRA_METHODS, ['eth_getBlockReceipts']);
  assert.deepEqual(SOCKET_METHODS, ['eth_subscribe', 'eth_unsubscribe']);
});

test('the gap check catches a spec with a part missing', () => {
  const s = METHOD_SPECS.get('eth_getBalance')!;
  assert.deepEqual(gaps('eth_getBalance', { ...s, block: undefined }), [
    "eth_getBalance: cache rule 'block' without a block parameter",
    'eth_getBalance: spec says the block is optional at undefined, the schema at 1',
  ]);
  assert.deepEqual(gaps('eth_getBalance', { ...s, cost: undefined as unknown as number }), ['eth_getBalance: cost undefined']);
  assert.deepEqual(gaps('eth_foo', undefined), ['eth_foo: no spec']);
});

test('routing and writes: accounts and keys on the designated node, a signed transaction broadcast', () => {
  const by = (f: (s: MethodSpec) => boolean) => [...METHOD_SPECS.values()].filter(f).map((s) => s.name).sort();
  assert.deepEqual(by((s) => s.route === 'designated'), ['eth_accounts', 'eth_sendTransaction', 'eth_sign']);
  assert.deepEqual(by((s) => s.route === 'broadcast'), ['eth_sendRawTransaction']);
  assert.deepEqual(by((s) => s.write === 'raw'), ['eth_sendRawTransaction']);
  assert.deepEqual(by((s) => s.write === 'signed'), ['eth_sendTransaction']);
  assert.deepEqual(by((s) => s.gasCapped), ['debug_traceCall', 'eth_call', 'eth_estimateGas']);
});

test('the facts the chain module routes by: traces, light reads, calls over the socket, lookups a lagging node may miss', () => {
  const by = (f: (s: MethodSpec) => boolean) => [...METHOD_SPECS.values()].filter(f).map((s) => s.name).sort();
  assert.deepEqual(by((s) => s.trace), ['debug_traceBlockByHash', 'debug_traceBlockByNumber', 'debug_traceCall', 'debug_traceTransaction']);
  assert.deepEqual(by((s) => s.overSocket), ['eth_call', 'eth_estimateGas']);
  assert.deepEqual(by((s) => s.fullTransactions !== undefined), ['eth_getBlockByHash', 'eth_getBlockByNumber']);
  const light = by((s) => s.light);
  for (const m of ['eth_getBalance', 'eth_blockNumber', 'eth_getCode', 'eth_getBlockByNumber', 'eth_getTransactionReceipt']) assert.ok(light.includes(m), m);
  for (const m of ['eth_feeHistory', 'eth_pendingTransactions', 'eth_getLogs', 'eth_call', 'eth_sendRawTransaction', 'eth_accounts', 'debug_traceTransaction', 'eth_subscribe']) {
    assert.ok(!light.includes(m), m);
  }
  assert.ok(METHOD_SPECS.get('eth_getTransactionByHash')!.pendingMayBeLag && METHOD_SPECS.get('eth_getBlockByHash')!.nullMayBeLag);
});

test('a method no spec describes takes the default path, routed by its name', () => {
  assert.equal(describe('evm_mine').route, 'designated');
  assert.equal(describe('eth_signTypedData_v4').route, 'designated');
  assert.equal(describe('eth_somethingNew').route, 'any');
  assert.ok(!describe('eth_somethingNew').light, 'nothing says it is light: it shares no node request');
  assert.ok(describe('debug_traceBlock').trace && !describe('debug_traceBlock').light);
  assert.equal(describe('eth_getBalance'), METHOD_SPECS.get('eth_getBalance'), 'a described method: its spec, no copy');
});

test('eth_getBlockReceipts: pinning, cache and read-your-writes follow its block parameter (number, tag or hash)', async () => {
  const { pinLatest } = await import('../chain/pin-latest.ts');
  const { blockSeenIn } = await import('../chain/block-seen.ts');
  const { CACHE_POLICIES } = await import('../cache/cache-policy.ts');
  const hash = '0x' + 'ab'.repeat(32);
  assert.deepEqual(pinLatest('eth_getBlockReceipts', ['latest'], 9), { params: ['0x9'], block: 9 });
  assert.deepEqual(pinLatest('eth_getBlockReceipts', ['0x5'], 9), { params: ['0x5'], block: 5 });
  assert.equal(pinLatest('eth_getBlockReceipts', [hash], 9), undefined, 'a bare hash names no number');
  assert.equal(pinLatest('eth_getBlockReceipts', [{ blockHash: hash }], 9), undefined);
  const policy = CACHE_POLICIES.eth_getBlockReceipts;
  const final = (n: number) => n <= 3;
  assert.equal(policy([hash], [], final), 'forever');
  assert.equal(policy([hash], null, final), 'never', 'a block not there yet may come with the next head');
  assert.equal(policy([{ blockHash: hash }], null, final), 'never');
  assert.equal(policy(['0x2'], [], final), 'forever');
  assert.equal(policy(['0x8'], [], final), 'head');
  assert.equal(policy(['latest'], [], final), 'head');
  assert.equal(policy(['pending'], [], final), 'never');
  assert.equal(blockSeenIn('eth_getBlockReceipts', [hash], [{ blockNumber: '0x7' }, { blockNumber: '0x7' }]), 7);
  assert.equal(blockSeenIn('eth_getBlockReceipts', [hash], null), undefined);
});
