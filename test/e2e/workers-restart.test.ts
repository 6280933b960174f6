/**
 * `--workers 2`: a worker that dies is started again, sooner the first time than when it keeps dying at start, and
 * as soon again once it has run well for 30 s (a crash after a long good run is a new fault, not the same one).
 * Workers are killed (SIGKILL) by their pid, which `/readyz` tells; the waits are read from the primary's log.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { killAll, sleep, startNodegate, type NodegateProcess } from '../helpers/process.ts';

/** The pid of the worker that answers `/readyz` on a connection of its own. */
function readyPid(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/readyz`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; }).on('end', () => {
        try { resolve(JSON.parse(text).pid as number); } catch { resolve(undefined); }
      });
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

describe('a worker that dies is started again: the delay doubles while it keeps dying, and is short again after a good run', { timeout: 180_000 }, () => {
  let ng: NodegateProcess;
  const known = new Set<number>();
  /** A worker pid not seen before (the one just started again), asked of the shared port until it answers. */
  const newWorker = async () => {
    const end = Date.now() + 30_000;
    while (Date.now() < end) {
      const pid = await readyPid(ng.url);
      if (pid !== undefined && !known.has(pid)) {
        known.add(pid);
        return pid;
      }
      await sleep(50);
    }
    assert.fail('no new worker within 30 s');
  };
  const waits = () => ng.logs().filter((l) => l.msg === 'worker exited; starting it again').map((l) => l.retryInMs as number);
  const kill = async (pid: number) => {
    const had = waits().length;
    process.kill(pid, 'SIGKILL');
    await eventually(() => waits().length > had, 10_000, `the primary saw worker ${pid} exit`);
    return waits().at(-1)!;
  };

  before(async () => {
    ng = await startNodegate({ env: { NODEGATE_WORKERS: '2' } });
    while (known.size < 2) {
      const pid = await readyPid(ng.url);
      if (pid !== undefined) known.add(pid);
    }
  });
  after(async () => {
    await ng?.stop();
    await killAll();
    if (ng) rmSync(ng.dataDir, { recursive: true, force: true });
  });

  test('250 ms, then 500 ms for a worker dead at once, then 250 ms again after it ran 30 s', async () => {
    const first = await kill([...known][0]);
    const second = await kill(await newWorker());
    const runner = await newWorker();
    await sleep(31_000);
    const afterGoodRun = await kill(runner);
    await newWorker();
    console.log(`workers: restart delays ${first} ms, ${second} ms (dead at once), ${afterGoodRun} ms (after a 31 s run)`);
    assert.deepEqual([first, second, afterGoodRun], [250, 500, 250]);
    assert.match(await ng.call('eth_blockNumber'), /^0x/, 'the gateway serves on');
  });
});
