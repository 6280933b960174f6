import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Upstream, UpstreamAnswer } from '../upstream.ts';
import { eventually } from '../../../test/helpers/eventually.ts';
import { AutomineWatchdog } from './automine-watchdog.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A node whose pool and head the test sets. A re-arm of automine mines what is pending, as anvil's miner does;
 * `busy` models a block being mined: its transactions are still in the pool, and a re-arm adds nothing.
 */
class FakeNode implements Upstream {
  readonly label = 'fake';
  pending = 0;
  head = 1;
  mined = 0;
  /** evm_mine calls: each one is a block, empty when anvil was mining already. */
  forced = 0;
  busy = false;
  failNext = 0;
  /** Runs while the watchdog reads the pool: a write that lands during a check. */
  onPoolRead: (() => void) | undefined;
  /** Runs at every read of the pool. */
  eachPoolRead: (() => void) | undefined;
  async call(method: string): Promise<UpstreamAnswer> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('node busy');
    }
    if (method === 'txpool_status') {
      const pending = this.pending;
      this.onPoolRead?.();
      this.onPoolRead = undefined;
      this.eachPoolRead?.();
      return { result: { pending: `0x${pending.toString(16)}`, queued: '0x0' } };
    }
    if (method === 'evm_mine') {
      this.forced++;
      this.mined++;
      this.head++;
      return { result: '0x0' };
    }
    if (method === 'evm_setAutomine') {
      if (this.busy || this.pending === 0) return { result: null };
      this.mined++;
      this.head++;
      this.pending = 0;
      return { result: '0x0' };
    }
    throw new Error(`unexpected ${method}`);
  }
  async close(): Promise<void> {}
}

describe('automine watchdog', () => {
  it('mines a block when a transaction stays pending and no block comes', async () => {
    const node = new FakeNode();
    const dog = new AutomineWatchdog(node, 20, () => {});
    node.pending = 1;
    dog.poke();
    await eventually(() => node.mined === 1, 2000, 'a block mined for the stuck transaction');
    dog.stop();
  });

  it('does not mine while blocks keep coming (the chain module tells it of each head)', async () => {
    const node = new FakeNode();
    const dog = new AutomineWatchdog(node, 10, () => {});
    node.pending = 1;
    let checks = 0;
    // Each check finds a transaction pending, and a new head has come since the last one: automine is working.
    node.eachPoolRead = () => {
      checks++;
      dog.headSeen(++node.head);
      if (checks === 5) node.pending = 0; // this check still saw one pending; the next finds none and stops
    };
    dog.headSeen(node.head);
    dog.poke();
    await eventually(() => checks >= 5, 2000, 'five checks ran');
    assert.equal(node.mined, 0);
    dog.stop();
  });

  it('never forces a block: a transaction still being mined after the delay gets no empty block after it', async () => {
    const node = new FakeNode();
    const dog = new AutomineWatchdog(node, 10, () => {});
    node.pending = 1;
    node.busy = true;
    let checks = 0;
    node.eachPoolRead = () => { checks++; };
    dog.poke();
    await eventually(() => checks >= 5, 2000, 'five checks ran while the block was being mined');
    node.busy = false; // mined: anvil's miner takes the pool's next transactions itself
    node.pending = 0;
    node.head++;
    await sleep(50);
    assert.equal(node.forced, 0, 'no evm_mine');
    assert.equal(node.mined, 0, 'no block but the one being mined');
    dog.stop();
  });

  it('does not mine while nothing is pending', async () => {
    const node = new FakeNode();
    const dog = new AutomineWatchdog(node, 10, () => {});
    dog.poke();
    await sleep(150);
    assert.equal(node.mined, 0);
    dog.stop();
  });

  it('a write accepted while a check reads the pool gets a check of its own', async () => {
    const node = new FakeNode();
    const dog = new AutomineWatchdog(node, 20, () => {});
    // The check sees an empty pool, but a transaction arrives (and stalls) while it runs.
    node.onPoolRead = () => {
      node.pending = 1;
      dog.poke();
    };
    dog.poke();
    await eventually(() => node.mined === 1, 2000, 'the transaction that arrived during a check was mined');
    dog.stop();
  });

  it('keeps watching after the node failed to answer a check', async () => {
    const node = new FakeNode();
    const errors: unknown[] = [];
    const dog = new AutomineWatchdog(node, 20, (e) => errors.push(e));
    node.pending = 1;
    node.failNext = 1;
    dog.poke();
    await eventually(() => node.mined === 1, 2000, 'mined after the failed check');
    assert.equal(errors.length, 1);
    dog.stop();
  });
});
