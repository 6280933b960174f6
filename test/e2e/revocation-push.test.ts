/**
 * A revocation reaches an instance as it commits, not at the instance's next poll of the store's changes: Nodegate on
 * PostgreSQL, polling only every 15 s (`auth.keyCacheTtlMs` 60 s, its highest); a key in use on it revoked by another
 * writer of the store (the accounts service on a store of its own, as the CLI or another instance revokes) is refused
 * at once, Nodegate having heard the store's word of it (PostgreSQL NOTIFY from the store's own triggers,
 * `nodegate_key_change_signals_total` on its /metrics).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { startNodegate, type NodegateProcess } from '../helpers/process.ts';
import { accountsCatalogue } from '../../src/accounts/catalogue.ts';
import { AccountsService } from '../../src/accounts/service.ts';
import { validateConfig } from '../../src/config/load.ts';
import { postgresStores } from '../../src/store/open-store.ts';

const skip = await postgresSkipReason('revocation pushed to another instance');

describe('revocation pushed to another instance', { timeout: 120_000, skip }, () => {
  let node: TestAnvil;
  let b: NodegateProcess;

  before(async () => {
    node = await startAnvil();
  });
  after(async () => {
    await b?.stop('SIGTERM').catch(() => {});
    node?.stop();
  });

  /** A counter of `p`'s /metrics (0 when absent). */
  const metric = async (p: NodegateProcess, name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(`${p.url}/metrics`)).text())?.[1] ?? 0);
  const call = async (p: NodegateProcess, key: string) => {
    const res = await fetch(`${p.url}/v1/mainnet/${key}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    return { status: res.status, body: await res.json() as { error?: { code: number; message: string } } };
  };

  test('a key revoked by another writer is refused before the instance polls again', async () => {
    const config = { networks: { mainnet: { chainId: 1, upstream: node.url } }, auth: { keyCacheTtlMs: 60_000 } };
    const url = await freshDatabase();
    const env = { DATABASE_URL: url, REDIS_URL: '', NODEGATE_LOG_LEVEL: 'warn' };
    b = await startNodegate({ env, config });
    const writer = await postgresStores(url);
    const accounts = new AccountsService(writer, accountsCatalogue(validateConfig(structuredClone(config))));
    const demo = await writer.accounts.getAccountByEmail('demo@localhost');
    const made = await accounts.createKey(demo!.id, { name: 'to revoke' });
    const key = { id: made.key.id, value: made.value };
    // The key resolved (and kept, trusted while the feed answers); the store's channel joined.
    assert.equal((await call(b, key.value)).status, 200);
    for (const end = Date.now() + 20_000; await metric(b, 'nodegate_key_change_channel_joins_total') < 1;) {
      assert.ok(Date.now() < end, 'the channel of changes joined within 20 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const heard = await metric(b, 'nodegate_key_change_signals_total');

    await accounts.revokeKey(key.id);
    await writer.close();
    const t0 = performance.now();
    let answer = await call(b, key.value);
    // Polled every 15 s: waited for well under that.
    for (const end = Date.now() + 10_000; answer.status === 200 && Date.now() < end; answer = await call(b, key.value)) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const ms = performance.now() - t0;
    console.log(`revocation by another writer refused after ${ms.toFixed(0)} ms (polls every 15 s)`);
    assert.equal(answer.status, 401, 'the revoked key is refused');
    assert.equal(answer.body.error?.code, -32010);
    assert.ok(await metric(b, 'nodegate_key_change_signals_total') > heard, "the store's word of the revocation was heard");
  });
});
