import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hexAnswer } from './hex-answer.ts';

const digits = 'ab'.repeat(40_000);

test('a large hex result is taken as it is: the same result and JSON text as parsing gives', () => {
  for (const text of [`{"jsonrpc":"2.0","id":7,"result":"0x${digits}"}`, `{"jsonrpc":"2.0","id":7,"result":"0x${digits}"}\n`]) {
    const a = hexAnswer(text, 7);
    assert.ok(a);
    assert.equal(a.result, JSON.parse(text).result);
    assert.equal(a.raw, JSON.stringify(JSON.parse(text).result));
  }
});

test('anything else is left to the parser: small, another id, not only hex, more members, an error, cut short', () => {
  const other = [
    '{"jsonrpc":"2.0","id":7,"result":"0xabcd"}',
    `{"jsonrpc":"2.0","id":8,"result":"0x${digits}"}`,
    `{"jsonrpc":"2.0","id":7,"result":"0x${digits}\\"}"}`,
    `{"jsonrpc":"2.0","id":7,"result":"0x${digits}zz"}`,
    `{"jsonrpc":"2.0","id":7,"result":"0x${digits}","extra":1}`,
    `{"jsonrpc":"2.0","id":7,"error":{"code":3,"message":"0x${digits}"}}`,
    `{"jsonrpc":"2.0","id":7,"result":"0x${digits}`,
    `{"jsonrpc":"2.0","id":7,"result":["0x${digits}"]}`,
  ];
  for (const text of other) assert.equal(hexAnswer(text, 7), undefined, text.slice(-40));
});
