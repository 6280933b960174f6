/**
 * One chain, one gateway: a second Nodegate started on a data directory whose embedded chain another Nodegate runs
 * is refused at start, naming the directory and the owner, and the first keeps its chain (the same anvil, the same
 * blocks, still answering). Without the owner's file, the second would find the first one's anvil, "save its chain and
 * stop it" and take it over. Once the first is killed, a start on that directory takes the chain over.
 * Instances that share a PostgreSQL store share accounts and keys: a second one with the embedded default is refused,
 * naming the fix, rather than serving a chain of its own under the same network.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { killAll, startNodegate } from '../helpers/process.ts';

const skipShared = await postgresSkipReason('one embedded chain per shared store');

const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

describe('one embedded chain per gateway', { timeout: 180_000 }, () => {
  let dataDir = '';
  after(async () => {
    await killAll();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('a second gateway on the same data directory is refused and the first keeps its chain; after a kill, a start takes it over', async () => {
    const first = await startNodegate();
    dataDir = first.dataDir;
    const [from] = await first.call<string[]>('eth_accounts');
    const hash = await first.call<string>('eth_sendTransaction', [{ from, to: TO, value: '0x1' }]);
    const anvilPid = () => JSON.parse(readFileSync(join(dataDir, 'chains', 'mainnet', 'anvil.pid'), 'utf8')).pid as number;
    const anvilBefore = anvilPid();
    const headBefore = await first.call<string>('eth_blockNumber');

    const refused = await startNodegate({ dataDir, key: first.key, timeoutMs: 60_000 }).then(() => undefined, (err: Error) => err.message);
    console.log(`chain owner: a second start on the same data directory -> ${refused?.split('\n').find((l) => l.includes('run by another')) ?? refused}`);
    assert.ok(refused, 'the second gateway did not start');
    assert.match(refused, /the embedded chain (mainnet|testnet) in \S+ is run by another Nodegate \(pid \d+\)/);

    assert.equal(anvilPid(), anvilBefore, "the first gateway's anvil was not replaced");
    assert.equal(await first.call<string>('eth_blockNumber'), headBefore, 'the first gateway still answers, at the same head');
    assert.equal((await first.call<{ status: string }>('eth_getTransactionReceipt', [hash])).status, '0x1');

    // A killed owner leaves its file: the next start takes the chain over, with the transaction.
    await first.stop('SIGKILL', { group: true });
    const next = await startNodegate({ dataDir, key: first.key });
    assert.equal((await next.call<{ status: string }>('eth_getTransactionReceipt', [hash])).status, '0x1');
    await next.stop();
  });

  test('two instances on one PostgreSQL store with the embedded default never serve two chains: the second is refused, naming the fix', { skip: skipShared }, async () => {
    const env = { DATABASE_URL: await freshDatabase() };
    const first = await startNodegate({ env });
    const [from] = await first.call<string[]>('eth_accounts');
    const hash = await first.call<string>('eth_sendTransaction', [{ from, to: TO, value: '0x1' }]);
    const refused = await startNodegate({ env, key: first.key }).then(async (p) => { await p.stop(); return undefined; }, (err: Error) => err.message);
    console.log(`shared store: a second instance with the embedded default -> ${refused?.split('\n').find((l) => l.includes('already run')) ?? refused}`);
    assert.ok(refused, 'the second instance did not start');
    assert.match(refused, /the embedded chain mainnet is already run by another Nodegate on this database: instances that share a store must share each chain/);
    assert.match(refused, /networks\.mainnet\.upstream/, 'the fix is named');
    assert.equal((await first.call<{ status: string }>('eth_getTransactionReceipt', [hash])).status, '0x1', 'the first serves its chain on');
    // The claim goes with the instance: once it is stopped (or killed, its connection ends), another may run the chain.
    // On its data directory, so that the anvils the killed instance left are found and stopped.
    await first.stop('SIGKILL', { group: true });
    const next = await startNodegate({ env, key: first.key, dataDir: first.dataDir });
    assert.equal((await next.call<{ status: string }>('eth_getTransactionReceipt', [hash])).status, '0x1');
    await next.stop();
    rmSync(first.dataDir, { recursive: true, force: true });
  });
});
