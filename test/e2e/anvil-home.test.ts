/**
 * The embedded chain writes nothing outside the data directory: anvil moves older blocks' states out of memory into a
 * folder under its home, and with the user's home that was `~/.foundry/anvil/tmp`, a new folder each start, never
 * removed after a kill (it filled a disk in an afternoon of tests). Nodegate as a real process with HOME set to a
 * folder of the test's own: after transactions and a kill and restart, that folder is empty, and the chain's own folder for
 * anvil holds one start's states only.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';

const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/**
 * Mines `n` blocks of one transfer each (anvil keeps about 500 blocks' states in memory and moves older ones to its
 * folder), 8 senders side by side, each transfer answered once it is in a block.
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

  test("anvil's states stay in the chain's folder, one start's at a time; the user's home gets nothing", async () => {
    const env = { HOME: home };
    const first = await startNodegate({ env });
    dataDir = first.dataDir;
    await blocks(first, 700);
    const states = join(dataDir, 'chains', 'mainnet', 'anvil-home', '.foundry', 'anvil', 'tmp');
    assert.ok(existsSync(states), `anvil's states are under the chain's folder (${states})`);
    // Killed, as a crash or an OOM kill does: anvil does not remove its own states then.
    await first.stop('SIGKILL', { group: true });

    const second = await startNodegate({ env, dataDir, key: first.key });
    await blocks(second, 700);
    const folders = readdirSync(states);
    console.log(`anvil home: the user's home holds [${readdirSync(home).join(', ')}]; the chain's anvil folder holds ${folders.length} state folder(s) after a restart`);
    assert.deepEqual(readdirSync(home), [], 'nothing is written in the home Nodegate was started with');
    assert.equal(folders.length, 1, `only the running anvil's states are kept (${folders.join(', ')})`);
    await second.stop();
  });
});
