import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errors as undiciErrors } from 'undici';
import { GatewayError } from '../errors/gateway-error.ts';
import { classifyAnswer, classifyFailure, forCaller, notSupported, transportError } from './classify.ts';
import { NodeHttpError } from './upstream.ts';

const err = (code: number, message: string, data?: unknown) => ({ error: { code, message, ...(data === undefined ? {} : { data }) } });
const brief = (o: { kind: string; retry: boolean; breaker: string; restMs?: number }) => `${o.kind} retry=${o.retry} ${o.breaker}${o.restMs === undefined ? '' : ` rest ${o.restMs}`}`;

describe('upstream outcomes, classified once', () => {
  test('a result is a success, never retried', () => {
    assert.equal(brief(classifyAnswer({ result: '0x1' })), 'result retry=false success');
    assert.equal(brief(classifyAnswer({ result: null })), 'result retry=false success');
  });

  test("a revert and invalid params are the caller's answer: the node is up, another node would say the same", () => {
    assert.equal(brief(classifyAnswer(err(3, 'execution reverted: no', '0x08c379a0'))), 'caller-error retry=false success');
    assert.equal(brief(classifyAnswer(err(-32602, 'invalid argument 0: hex string without 0x prefix'))), 'caller-error retry=false success');
    assert.equal(brief(classifyAnswer(err(-32000, 'nonce too low'))), 'caller-error retry=false success');
    assert.equal(brief(classifyAnswer(err(-32000, 'execution reverted'))), 'caller-error retry=false success');
    assert.equal(classifyAnswer(err(-32000, 'execution reverted: header not found')).kind, 'caller-error', "a revert reason's words");
    assert.equal(classifyAnswer(err(-32000, 'VM Exception while processing transaction: revert rate limit')).kind, 'caller-error', 'ganache');
  });

  test("a node's capacity error (-32005, 429 in the body, words) is its 'not now': retried elsewhere, a failure with a rest", () => {
    assert.equal(brief(classifyAnswer(err(-32005, 'daily request count exceeded, request rate limited'))), 'capacity retry=true failure rest 1000');
    assert.equal(brief(classifyAnswer(err(429, 'Too Many Requests'))), 'capacity retry=true failure rest 1000');
    assert.equal(brief(classifyAnswer(err(-32000, 'rate limit exceeded'))), 'capacity retry=true failure rest 1000');
    // Infura's hint of when to come back.
    assert.equal(classifyAnswer(err(-32005, 'project ID request rate exceeded', { rate: { backoff_seconds: 30 } })).restMs, 30_000);
  });

  test("an eth_getLogs refusal for size (-32005 'query returned more than 10000 results', any code) is no capacity error: not retried as it is, the node is up", () => {
    assert.equal(brief(classifyAnswer(err(-32005, 'query returned more than 10000 results'))), 'too-wide retry=false success');
    assert.deepEqual(classifyAnswer(err(-32005, 'query returned more than 10000 results')).refusal, { of: 'results', results: 10000 });
    assert.deepEqual(classifyAnswer(err(-32005, 'block range is too large')).refusal, { of: 'range' });
    assert.deepEqual(classifyAnswer(err(-32000, 'exceed maximum block range: 2000')).refusal, { of: 'range', blocks: 2000 });
    assert.deepEqual(classifyAnswer(err(-32614, 'eth_getLogs is limited to a 10,000 range')).refusal, { of: 'range', blocks: 10000 });
    assert.equal(classifyAnswer(err(-32602, 'Log response size exceeded.')).kind, 'too-wide', 'before invalid params');
  });

  test('a node missing data (header not found, missing trie node, unknown block) is retried elsewhere; breaker neutral', () => {
    for (const message of ['header not found', 'missing trie node 1a2b (path ) state 0x1 is not available', 'unknown block', 'required historical state unavailable (reexec=128)']) {
      assert.equal(brief(classifyAnswer(err(-32000, message))), 'missing-data retry=true neutral', message);
    }
    // anvil behind says it with invalid params' code; other -32602 stay the caller's.
    assert.equal(brief(classifyAnswer(err(-32602, 'BlockOutOfRangeError: block height is 99 but requested was 711'))), 'missing-data retry=true neutral');
    // Pruned state and expired history in the words of geth, reth, providers, and EIP-4444's code.
    for (const [code, message] of [[4444, 'pruned history unavailable'], [-32000, 'state at block #12 is pruned'], [-32000, "state histories haven't been fully indexed yet"],
      [-32000, 'state histories for block 12 are not available'], [-32000, 'transaction indexing is in progress'], [-32000, 'header not found']] as const) {
      assert.equal(brief(classifyAnswer(err(code, message))), 'missing-data retry=true neutral', message);
    }
    assert.equal(classifyAnswer(err(-32602, 'invalid argument 0: hex string has length 3')).kind, 'caller-error');
  });

  test('"method not supported" as each implementation says it; a revert reason never counts', () => {
    assert.ok(notSupported({ code: -32601, message: 'Method not found' }), 'anvil, geth, reth');
    assert.ok(notSupported({ code: -32004, message: 'Method net_peerCount is not supported' }), 'Hardhat / EDR');
    assert.ok(notSupported({ code: -32700, message: 'Method eth_mining not supported.' }), 'ganache');
    assert.ok(notSupported({ code: -32000, message: 'The method eth_foo does not exist/is not available' }));
    assert.ok(!notSupported({ code: -32000, message: 'header not found' }));
    assert.ok(!notSupported({ code: -32700, message: 'Parse error' }));
    assert.ok(!notSupported({ code: -32000, message: 'execution reverted: method not supported' }));
    assert.ok(!notSupported({ code: 3, message: 'execution reverted: method not supported' }));
    assert.equal(brief(classifyAnswer(err(-32004, 'Method eth_mining is not supported'))), 'not-supported retry=false success');
  });

  test('no answer: HTTP status with Retry-After, time-out, transport; the gateway\'s own refusal is neutral', () => {
    assert.equal(brief(classifyFailure(new NodeHttpError(429, 7000))), 'http-status retry=true failure rest 7000');
    assert.equal(brief(classifyFailure(new NodeHttpError(429, undefined))), 'http-status retry=true failure rest 1000');
    assert.equal(brief(classifyFailure(new NodeHttpError(503, undefined))), 'http-status retry=true failure');
    assert.equal(brief(classifyFailure(new GatewayError('UPSTREAM_TIMEOUT'))), 'timeout retry=true failure');
    assert.equal(brief(classifyFailure(new GatewayError('UPSTREAM_UNAVAILABLE'))), 'transport retry=true failure');
    assert.equal(brief(classifyFailure(new GatewayError('ANSWER_TOO_LARGE', { method: 'x', limit: 1 }))), 'gateway retry=false neutral');
    assert.equal(brief(classifyFailure(new Error('a bug'))), 'gateway retry=false neutral');
  });

  test("undici's errors become the catalogue's: headers/body time-out 504 -32015, anything else 503 -32002", () => {
    assert.equal(transportError(new undiciErrors.HeadersTimeoutError()).entry, 'UPSTREAM_TIMEOUT');
    assert.equal(transportError(new undiciErrors.BodyTimeoutError()).entry, 'UPSTREAM_TIMEOUT');
    assert.equal(transportError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).entry, 'UPSTREAM_UNAVAILABLE');
    const http = new NodeHttpError(429, 1000);
    assert.equal(transportError(http), http, 'kept as it is: its Retry-After is needed');
  });

  test("a node error's data.stack (ganache: its server's file paths) is dropped; the rest passes", () => {
    const ganache = {
      code: -32000,
      message: 'VM Exception while processing transaction: revert',
      data: { message: 'revert', result: '0x08c379a0', reason: 'no', stack: 'RuntimeError: VM Exception\n    at /usr/lib/node_modules/ganache/dist/node/1.js:2:1' },
      stack: 'Error\n    at /srv/node/server.js:1:1',
    };
    assert.deepEqual(forCaller(ganache), { code: -32000, message: ganache.message, data: { message: 'revert', result: '0x08c379a0', reason: 'no' } });
    const nested = { code: -32603, message: 'Internal error', data: { data: { stack: '/home/x/hardhat/internal.js' }, message: 'm' } };
    assert.deepEqual(forCaller(nested), { code: -32603, message: 'Internal error', data: { data: {}, message: 'm' } });
    const clean = { code: 3, message: 'execution reverted', data: '0x08c379a0' };
    assert.equal(forCaller(clean), clean, 'nothing to drop: the same object');
  });
});
