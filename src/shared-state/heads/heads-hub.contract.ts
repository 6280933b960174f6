import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type { HeadsHub, NodesReport } from './heads-hub.ts';

/**
 * The behaviour every HeadsHub must have (STYLE principle 6): run by memory-heads.test.ts (the primary's table),
 * redis-heads.test.ts (instances) and remote-heads.test.ts (workers, through their primary). `open` gives one more
 * process's hub, sharing with the others it gave; `unreachable`, for a shared store, one as the shared state opens
 * it (open-shared-state.ts) whose store never answers within its time-out. Each test names nodes no other test
 * names, so its heads are its own.
 */
export function headsHubContract(name: string, open: () => Promise<HeadsHub>, options: { skip?: string; unreachable?: () => Promise<HeadsHub> } = {}): void {
  describe(`${name} heads hub`, { skip: options.skip }, () => {
    const opened: HeadsHub[] = [];
    after(() => Promise.all(opened.map((h) => h.close())));
    const hub = async (make = open) => {
      const h = await make();
      opened.push(h);
      return h;
    };
    const nodes = () => [`http://127.0.0.1:1/${randomBytes(8).toString('hex')}`];

    test('a block published by one process is read by another, only ever higher, and lowered when the chain went back', async () => {
      const at = nodes();
      const a = (await hub()).network(1, at, () => {});
      let told!: (n: number) => void;
      const toldOnce = new Promise<number>((r) => { told = r; });
      const b = (await hub()).network(1, at, (n) => told(n));
      assert.equal(await b.read(), undefined, 'nothing published yet');
      await a.publish(10);
      assert.equal(await b.read(), 10);
      assert.equal(await toldOnce, 10, 'the other process is told of it without asking');
      await a.publish(9);
      assert.equal(await b.read(), 10, 'a lower block does not take the head back');
      await a.lower(7);
      assert.equal(await b.read(), 7, 'the chain went back: the shared head follows');
    });

    test('processes in front of other nodes, or another chain, share nothing', async () => {
      const at = nodes();
      const a = (await hub()).network(1, at, () => {});
      const other = (await hub()).network(1, [...at, 'http://127.0.0.1:2/'], () => {});
      const chain5 = (await hub()).network(5, at, () => {});
      await a.publish(1_000);
      assert.equal(await other.read(), undefined);
      assert.equal(await chain5.read(), undefined);
    });

    test('the nodes are named by what they are: the same nodes in another order share the head', async () => {
      const at = [...nodes(), 'http://127.0.0.1:3/'];
      const a = (await hub()).network(1, at, () => {});
      const b = (await hub()).network(1, [...at].reverse(), () => {});
      await a.publish(42);
      assert.equal(await b.read(), 42);
    });

    test('one process leads the checks while its lease lasts; another takes it once it lapses', async () => {
      const at = nodes();
      const [a, b] = [(await hub()).network(1, at, () => {}), (await hub()).network(1, at, () => {})];
      assert.equal(await a.leads(300), true);
      assert.equal(await b.leads(300), false, 'held by the other');
      assert.equal(await a.leads(300), true, 'the holder keeps it');
      await sleep(400);
      assert.equal(await b.leads(300), true, 'lapsed: taken');
      assert.equal(await a.leads(300), false);
    });

    test("the checking process's report is read by the others until it expires", async () => {
      const at = nodes();
      const [a, b] = [(await hub()).network(1, at, () => {}), (await hub()).network(1, at, () => {})];
      assert.equal(await b.lastReport(), undefined, 'none yet');
      const report: NodesReport = { agreed: 12, safe: 10, finalized: 8, members: { 'http://node-a/': { head: 12, chainId: 1, refused: false, forked: false } } };
      await a.report(report, 300);
      assert.deepEqual(await b.lastReport(), report);
      await sleep(400);
      assert.equal(await b.lastReport(), undefined, 'too old');
    });

    // A store of the process's own (the memory table) always answers: nothing to show there.
    const unreachable = options.unreachable;
    if (unreachable) test('its store not answering: reads say nothing, publications resolve, every process leads its own checks', async () => {
      const h = (await hub(unreachable)).network(1, nodes(), () => {});
      assert.equal(await h.read(), undefined);
      await h.publish(5);
      await h.lower(4);
      assert.equal(await h.leads(1000), true);
      await h.report({ agreed: 1, safe: undefined, finalized: undefined, members: {} }, 1000);
      assert.equal(await h.lastReport(), undefined);
    });
  });
}
