import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { catalogue, errorFacts } from './catalogue.ts';

/** Rows of the markdown table in docs/errors.md, by error name. */
function documentedRows(): Map<string, string[]> {
  const md = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, string[]>();
  for (const line of md.split('\n')) {
    const m = /^\| `([A-Z_]+)` \|(.*)\|$/.exec(line);
    if (!m) continue;
    rows.set(m[1], m[2].split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|').replace(/^`|`$/g, '')));
  }
  return rows;
}

test('docs/errors.md lists exactly the errors of the catalogue, with the same status, code, message and reason', () => {
  const rows = documentedRows();
  assert.deepEqual([...rows.keys()].sort(), Object.keys(catalogue).sort(), 'the same error names');
  for (const [name, e] of Object.entries(catalogue)) {
    const [status, code, message, reason, situation] = rows.get(name)!;
    assert.equal(Number(status), e.status, `${name}: HTTP status`);
    assert.equal(Number(code), e.code, `${name}: code`);
    assert.equal(message, e.message, `${name}: message`);
    assert.equal(reason, e.reason, `${name}: reason`);
    assert.equal(situation, e.situation, `${name}: situation`);
  }
});

test('the catalogue holds the rows docs/decisions.md §5 fixes', () => {
  const fixed: Array<[keyof typeof catalogue, number, number, string]> = [
    ['PARSE_ERROR', 400, -32700, 'Parse error'],
    ['INVALID_REQUEST', 400, -32600, 'Invalid Request'],
    ['BODY_TOO_LARGE', 413, -32600, 'request body exceeds'],
    ['UNSUPPORTED_MEDIA_TYPE', 415, -32600, 'unsupported content type'],
    ['METHOD_NOT_FOUND', 200, -32601, 'the method {method} does not exist/is not available'],
    ['INVALID_PARAMS', 200, -32602, 'Invalid params'],
    ['INVALID_KEY', 401, -32010, 'invalid API key'],
    ['KEY_REVOKED', 401, -32010, 'API key revoked'],
    ['FORBIDDEN', 403, -32011, 'forbidden: '],
    ['UNKNOWN_NETWORK', 404, -32012, 'unknown network'],
    ['LIMIT_EXCEEDED', 429, -32005, 'limit exceeded'],
    ['LOGS_TOO_MANY', 200, -32005, 'query returned more than'],
    ['FILTER_NOT_FOUND', 200, -32000, 'filter not found'],
    ['UPSTREAM_UNAVAILABLE', 503, -32002, 'resource unavailable'],
    ['UPSTREAM_TIMEOUT', 504, -32015, 'request timed out'],
    ['INTERNAL', 500, -32603, 'Internal error'],
  ];
  for (const [name, status, code, start] of fixed) {
    const e = catalogue[name];
    assert.equal(e.status, status, `${name} status`);
    assert.equal(e.code, code, `${name} code`);
    assert.ok(e.message.startsWith(start), `${name} message starts with ${start}`);
  }
});

test('the facts the dashboard shows name every catalogue row with its code, HTTP status and meaning', () => {
  const facts = errorFacts();
  assert.equal(facts.length, Object.keys(catalogue).length);
  assert.deepEqual(facts.find((f) => f.name === 'key_revoked'), { code: -32010, http: 401, name: 'key_revoked', meaning: 'revoked key' });
  assert.deepEqual(facts.filter((f) => f.code === -32005 && f.http === 429).map((f) => f.name).sort(), ['limit_exceeded', 'message_rate']);
  for (const f of facts) assert.ok(f.meaning.length > 0 && Number.isInteger(f.code) && f.http >= 200, JSON.stringify(f));
});
