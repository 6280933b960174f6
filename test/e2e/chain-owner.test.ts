/**
 * One chain, one gateway: a second Nodegate started on a data directory whose embedded chain another Nodegate runs
 * is refused at start, naming the directory and the owner, and the first keeps its chain (the same anvil, the same
 * blocks, still answering). Without the owner's file, the second found the first one's anvil, "saved its chain and
 * stopped it" and took it over. Once the first is killed, a start on that directory takes the chain over as before.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { killAll, startNodegate } from '../helpers/process.ts';

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
});
