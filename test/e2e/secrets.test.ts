import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import pg from 'pg';
import { createLogger, startGateway, type Gateway } from '../../src/app.ts';
import { validateConfig } from '../../src/config/load.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { TEST_PLAN } from '../helpers/gateway.ts';

/**
 * docs/decisions.md §6: a key's value is shown once, at creation, and then appears nowhere: not in the store (the SQLite
 * file, the PostgreSQL rows), not in the logs, not in any later API response.
 */
async function exercise(database: string | undefined) {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } });
  const dataDir = mkdtempSync(join(tmpdir(), 'nodegate-secrets-'));
  const config = validateConfig({
    dataDir, server: { port: 0 }, log: { level: 'trace', requests: true },
    database: database ? { url: database } : {},
    plans: { test: TEST_PLAN }, accounts: { defaultPlan: 'test' },
    networks: { mainnet: { chainId: 1 } },
  });
  const gw: Gateway = await startGateway(config, { log: createLogger(config, sink) });
  const responses: string[] = [];
  const operator = 'Basic ' + Buffer.from(`${gw.secrets.operatorEmail}:${gw.secrets.operatorPassword}`).toString('base64');
  const api = async (method: string, path: string, body?: unknown, auth = operator) => {
    const res = await fetch(gw.url + path, { method, headers: { authorization: auth, ...(method !== 'GET' ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const text = await res.text();
    return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
  };
  let value: string;
  try {
    const demo = (await gw.store.accounts.getAccountByEmail('demo@localhost'))!;
    // The one response that may hold it.
    const created = await api('POST', `/api/v1/operator/accounts/${demo.id}/keys`, { name: 'secret', type: 'Restricted', permissions: ['rpc', 'admin'] });
    assert.equal(created.status, 201, created.text);
    value = created.json.value;
    assert.match(value, /^ngk_/);
    // Everything after it: JSON-RPC calls (good and bad), API reads, an update, a revocation, a refused call.
    const rpc = async (body: string) => {
      const res = await fetch(`${gw.url}/v1/mainnet/${value}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      responses.push(await res.text());
    };
    await rpc('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
    await rpc('{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x1"]}');
    await rpc('{broken');
    for (const r of [
      await api('GET', '/api/v1/keys', undefined, `Bearer ${value}`),
      await api('GET', `/api/v1/keys/${created.json.id}`, undefined, `Bearer ${value}`),
      await api('GET', '/api/v1/account', undefined, `Bearer ${value}`),
      await api('PATCH', `/api/v1/keys/${created.json.id}`, { name: 'renamed' }, `Bearer ${value}`),
      await api('GET', `/api/v1/operator/accounts/${demo.id}/keys`),
      await api('POST', `/api/v1/operator/keys/${created.json.id}/revoke`),
    ]) responses.push(r.text);
    await rpc('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}'); // 401 now
    responses.push((await api('GET', '/api/v1/keys', undefined, `Bearer ${value}`)).text);
    assert.ok(responses.some((r) => r.includes('"renamed"')), 'the calls did happen');
  } finally {
    await gw.close();
  }
  return { value: value!, dataDir, logs: lines.join(''), responses };
}

function assertAbsent(value: string, where: string, text: string | Buffer) {
  assert.ok(!text.includes(value), `the key value is not in ${where}`);
  assert.ok(!text.includes(value.slice(4)), `nor its random part, in ${where}`);
}

const skip = await postgresSkipReason('PostgreSQL secrets check');

describe('a key value appears nowhere after its creation', () => {
  test('SQLite: not in the database files, the logs, or any later response', async () => {
    const { value, dataDir, logs, responses } = await exercise(undefined);
    try {
      const files = readdirSync(dataDir).filter((f) => f.startsWith('nodegate.db'));
      assert.ok(files.includes('nodegate.db'));
      for (const f of files) assertAbsent(value, f, readFileSync(join(dataDir, f)));
      assert.ok(logs.includes('[redacted]'), 'request lines were logged');
      assertAbsent(value, 'the logs', logs);
      for (const r of responses) assertAbsent(value, 'an API or JSON-RPC response', r);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('PostgreSQL: not in any row of any table, the logs, or any later response', { skip }, async () => {
    const url = await freshDatabase();
    const { value, dataDir, logs, responses } = await exercise(url);
    try {
      const client = new pg.Client(url);
      await client.connect();
      const { rows: tables } = await client.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'");
      let seen = 0;
      for (const { t } of tables) {
        const { rows } = await client.query(`SELECT row_to_json(x)::text AS j FROM "${t}" x`);
        for (const { j } of rows) { seen++; assertAbsent(value, `table ${t}`, j); }
      }
      await client.end();
      assert.ok(seen > 5, `rows were read (${seen})`);
      assertAbsent(value, 'the logs', logs);
      for (const r of responses) assertAbsent(value, 'an API or JSON-RPC response', r);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
