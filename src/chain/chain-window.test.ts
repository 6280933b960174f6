import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChainWindow, type BlockRef, type ChainChange } from './chain-window.ts';

/** A chain the test rewrites: `hashes[n]` is block n's hash; each block's parent is the hash before it. */
class Chain {
  hashes: string[] = [];
  reads: number[] = [];
  constructor(...hashes: string[]) {
    this.hashes = hashes;
  }
  block(n: number): BlockRef | undefined {
    const hash = this.hashes[n];
    return hash === undefined ? undefined : { number: n, hash, parentHash: n > 0 ? this.hashes[n - 1] : '0x0' };
  }
  /** The fetcher the window is given: counts its reads. */
  readonly fetch = async (n: number): Promise<BlockRef | undefined> => {
    this.reads.push(n);
    return this.block(n);
  };
}

/** A window over `chain` and what it told, as text. */
function watch(chain: Chain, size?: number) {
  const w = new ChainWindow(chain.fetch, size);
  const told: string[] = [];
  w.subscribe((c: ChainChange) => told.push(c.type === 'block' ? `block ${c.block.number} ${c.block.hash}`
    : `reorg ${c.from}→${c.to} depth ${c.depth}: ${c.dropped.map((b) => b.hash).join(',')}`));
  return { w, told };
}

/** Adds blocks from..to of `chain` in order, as the chain module's rounds do (stopping at a reorg or a gap). */
async function feed(w: ChainWindow, chain: Chain, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n++) {
    const r = await w.add(chain.block(n)!);
    if (r === 'reorg' || r === 'gap') return;
  }
}

describe('the chain window', () => {
  test('the first block seeds it unannounced; each next block is announced once, in order', async () => {
    const chain = new Chain('a0', 'a1', 'a2', 'a3');
    const { w, told } = watch(chain);
    assert.equal(await w.add(chain.block(1)!), 'seeded');
    await feed(w, chain, 2, 3);
    assert.equal(await w.add(chain.block(3)!), 'known', 'the same block again');
    assert.equal(await w.add(chain.block(0)!), 'known', 'older than the window');
    assert.deepEqual(told, ['block 2 a2', 'block 3 a3']);
    assert.deepEqual(chain.reads, [], 'nothing read while the blocks agree');
    assert.equal(w.hashAt(2, { number: 3, hash: 'a3' }), 'a2');
    assert.equal(w.hashAt(2, { number: 3, hash: 'b3' }), undefined, 'a head on another branch: the window cannot say');
  });

  test('a reorganisation of depth N: the N dropped blocks are named, oldest first, then the new branch comes', async () => {
    const chain = new Chain('a0', 'a1', 'a2', 'a3', 'a4', 'a5');
    const { w, told } = watch(chain);
    await w.add(chain.block(0)!);
    await feed(w, chain, 1, 5);
    // Blocks 3.. replaced by a longer branch: block 6's parent is not the window's block 5.
    chain.hashes.splice(3, 3, 'b3', 'b4', 'b5', 'b6');
    assert.equal(await w.add(chain.block(6)!), 'reorg');
    assert.equal(w.tip?.hash, 'a2', 'back to the block both branches share');
    await feed(w, chain, 3, 6);
    assert.deepEqual(told.slice(5), ['reorg 5→2 depth 3: a3,a4,a5', 'block 3 b3', 'block 4 b4', 'block 5 b5', 'block 6 b6']);
    assert.deepEqual(chain.reads, [5, 4, 3, 2], 'one read per block walked back');
  });

  test('a block replaced at the same height is a reorganisation of depth 1', async () => {
    const chain = new Chain('a0', 'a1', 'a2');
    const { w, told } = watch(chain);
    await w.add(chain.block(0)!);
    await feed(w, chain, 1, 2);
    chain.hashes[2] = 'b2';
    assert.equal(await w.add(chain.block(2)!), 'reorg');
    await feed(w, chain, 2, 2);
    assert.deepEqual(told, ['block 1 a1', 'block 2 a2', 'reorg 2→1 depth 1: a2', 'block 2 b2']);
  });

  test('a reorganisation deeper than the window: every block it holds is dropped, and it goes on from the new parent', async () => {
    const chain = new Chain(...Array.from({ length: 10 }, (_, i) => `a${i}`));
    const { w, told } = watch(chain, 4);
    await w.add(chain.block(0)!);
    await feed(w, chain, 1, 9);
    assert.equal(w.length, 4, 'bounded: blocks 6..9 kept');
    assert.equal(w.at(5), undefined);
    for (let n = 3; n <= 10; n++) chain.hashes[n] = `b${n}`;
    assert.equal(await w.add(chain.block(10)!), 'reorg');
    assert.deepEqual(told.at(-1), 'reorg 9→5 depth 4: a6,a7,a8,a9', 'what the window held, and no more');
    assert.equal(w.tip?.hash, 'b5', 'the canonical parent of the oldest dropped block');
    assert.ok(chain.reads.length <= 5, `bounded by the window (${chain.reads.length} reads)`);
    await feed(w, chain, 6, 10);
    assert.deepEqual(told.slice(-5), ['block 6 b6', 'block 7 b7', 'block 8 b8', 'block 9 b9', 'block 10 b10']);
  });

  test('a gap is not filled by guessing: the blocks between are to be added first', async () => {
    const chain = new Chain('a0', 'a1', 'a2', 'a3', 'a4');
    const { w, told } = watch(chain);
    await w.add(chain.block(1)!);
    assert.equal(await w.add(chain.block(4)!), 'gap');
    w.offer(chain.block(4)!);
    assert.equal(w.tip?.number, 1, 'an answer past the tip + 1 is not taken either');
    await feed(w, chain, 2, 4);
    assert.deepEqual(told, ['block 2 a2', 'block 3 a3', 'block 4 a4']);
  });

  test('blocks seen in answers: the next one is taken at once; one on another branch is left to the next read', async () => {
    const chain = new Chain('a0', 'a1', 'a2');
    const { w, told } = watch(chain);
    w.offer(chain.block(1)!);
    assert.equal(w.length, 0, 'not following: nothing is taken');
    w.seed(chain.block(1)!);
    w.offer(chain.block(2)!);
    w.offer({ number: 2, hash: 'x2', parentHash: 'a1' });
    w.offer({ number: 3, hash: 'x3', parentHash: 'x2' });
    assert.deepEqual(told, ['block 2 a2']);
    assert.equal(await w.add(chain.block(2)!), 'known', 'the read after the answer announces nothing twice');
  });

  test('the head going back drops the blocks above it, in one reorg', () => {
    const chain = new Chain('a0', 'a1', 'a2', 'a3');
    const { w, told } = watch(chain);
    w.seed(chain.block(0)!);
    for (let n = 1; n <= 3; n++) w.offer(chain.block(n)!);
    w.wentBack(3, 1);
    assert.deepEqual(told.at(-1), 'reorg 3→1 depth 2: a2,a3');
    assert.equal(w.tip?.hash, 'a1');
    w.clear();
    w.wentBack(5, 4);
    assert.deepEqual(told.at(-1), 'reorg 5→4 depth 1: ', 'not following: the reorg is told, with nothing dropped');
  });
});
