/**
 * The embedded chain writes nothing outside the data directory, and no states of older blocks anywhere: anvil would
 * move them out of memory into a folder under its home (`~/.foundry/anvil/tmp`, ~2.4 MB a block, never removed after
 * a kill); it runs with `--max-persisted-states 0` and its home is the chain's `anvil-home` folder. Nodegate as a real
 * process with HOME set to a folder of the test's own: after 700 blocks, a kill and 700 more, that folder is empty,
 * and so is the chain's folder for anvil.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';

const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/**
 * Mines `n` blocks of one transfer each (past the 500 blocks' states anvil keeps in memory), 8 senders side by side,
 * each transfer answered once it is in a block.
 */
async function blocks(ng: NodegateProcess, n: number): Promise<void> {
  const accounts = (await ng.call<string[]>('eth_accounts')).slice(0, 8);
  await Promise.all(accounts.map(async (from) => {
    for (let i = 0; i < n / accounts.length; i++) await ng.call<string>('eth_sendTransaction', [{ from, to: TO, value: '0x1' }]);
  }));
}

describe('the embedded chain writes nothing outside the data directory', { timeout: 180_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), 'nodegate-home-'));
  let dataDir = '';
  after(async () => {
    await killAll();
    rmSync(home, { recursive: true, force: true });
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("no states of older blocks are written, in the chain's folder or the user's home", async () => {
    const env = { HOME: home };
    const first = await startNodegate({ env });
    dataDir = first.dataDir;
    await blocks(first, 700);
    const anvilHome = join(dataDir, 'chains', 'mainnet', 'anvil-home');
    assert.ok(existsSync(anvilHome), `anvil's home is the chain's folder (${anvilHome})`);
    // Killed, as a crash or an OOM kill does: anvil does not remove its own states then.
    await first.stop('SIGKILL', { group: true });

    const second = await startNodegate({ env, dataDir, key: first.key });
    await blocks(second, 700);
    const kept = readdirSync(anvilHome, { recursive: true });
    console.log(`anvil home: the user's home holds [${readdirSync(home).join(', ')}]; the chain's anvil folder holds [${kept.join(', ')}] after 1,400 blocks and a restart`);
    assert.deepEqual(readdirSync(home), [], 'nothing is written in the home Nodegate was started with');
    assert.deepEqual(kept, [], 'no states of older blocks are written to disk');
    await second.stop();
  });
});
