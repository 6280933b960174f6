import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batchRefusal, logsRefusal, readCount } from './size-refusals.ts';

const refusal = (code: number, message: string) => logsRefusal({ code, message });

describe('eth_getLogs refusals for size, in each node\'s and provider\'s words', () => {
  test('geth: "query returned more than 10000 results" is a refusal for its results, 10,000 of them', () => {
    assert.deepEqual(refusal(-32000, 'query returned more than 10000 results'), { of: 'results', results: 10000 });
  });

  test('Infura: the same words as -32005, with a block range that fits', () => {
    assert.deepEqual(refusal(-32005, 'query returned more than 10000 results. Try with this block range [0x1, 0x7d0].'), { of: 'results', results: 10000 });
  });

  test('Erigon / Alchemy: "exceed maximum block range: 2000" is a range of 2,000 blocks', () => {
    assert.deepEqual(refusal(-32000, 'exceed maximum block range: 2000'), { of: 'range', blocks: 2000 });
  });

  test('QuickNode: "eth_getLogs is limited to a 10,000 range" is a range of 10,000 blocks', () => {
    assert.deepEqual(refusal(-32614, 'eth_getLogs is limited to a 10,000 range'), { of: 'range', blocks: 10000 });
  });

  test('"block range too large" is a range refusal that names no bound', () => {
    assert.deepEqual(refusal(-32000, 'block range too large'), { of: 'range' });
    assert.deepEqual(refusal(-32005, 'block range is too large'), { of: 'range' });
    assert.deepEqual(refusal(-32000, 'block range is too wide (maximum 10)'), { of: 'range', blocks: 10 }, 'Frontier');
  });

  test('Alchemy: "Log response size exceeded" is a refusal for its results, with the range it always takes', () => {
    const alchemy = 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, '
      + 'or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0x0, 0x1f3]';
    assert.deepEqual(refusal(-32602, alchemy), { of: 'results', blocks: 2000, results: 10000 });
    assert.deepEqual(refusal(-32602, 'Log response size exceeded.'), { of: 'results' });
  });

  test('other errors are no refusal for size: a range beyond the head, a revert, capacity', () => {
    assert.equal(refusal(-32602, 'block range extends beyond current head block'), undefined);
    assert.equal(refusal(3, 'execution reverted'), undefined);
    assert.equal(refusal(-32005, 'daily request count exceeded, request rate limited'), undefined);
    assert.equal(refusal(-32000, 'header not found'), undefined);
    assert.equal(logsRefusal(undefined), undefined);
  });

  test('numbers as providers write them', () => {
    assert.equal(readCount('10,000'), 10000);
    assert.equal(readCount('2K'), 2000);
    assert.equal(readCount('1.5k'), 1500);
    assert.equal(readCount('0'), undefined);
    assert.equal(readCount(undefined), undefined);
  });
});

describe('batch refusals for size', () => {
  test('geth "batch too large", Alchemy "Batch size too large", "batch size limit exceeded": no size said', () => {
    assert.deepEqual(batchRefusal({ code: -32600, message: 'batch too large' }), {});
    assert.deepEqual(batchRefusal({ code: -32600, message: 'Batch size too large' }), {});
    assert.deepEqual(batchRefusal({ code: -32005, message: 'batch size limit exceeded' }), {});
  });

  test('a size said is the size learnt', () => {
    assert.deepEqual(batchRefusal({ code: -32600, message: 'maximum batch size is 10' }), { calls: 10 });
    assert.deepEqual(batchRefusal({ code: -32600, message: 'batch requests are limited to 50' }), { calls: 50 });
    assert.deepEqual(batchRefusal({ code: -32600, message: 'batch limit exceeded: max 25' }), { calls: 25 });
  });

  test('other errors are none', () => {
    assert.equal(batchRefusal({ code: -32600, message: 'Invalid Request' }), undefined);
    assert.equal(batchRefusal({ code: -32000, message: 'query returned more than 10000 results' }), undefined);
  });
});
