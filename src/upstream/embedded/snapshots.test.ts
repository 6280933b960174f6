import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { SnapshotFiles } from './snapshots.ts';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const files = () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-snap-'));
  dirs.push(dir);
  return new SnapshotFiles(dir);
};
const state = (head: number) => gzipSync(JSON.stringify({ best_block_number: head, pad: 'x'.repeat(2000) }));
/** The two snapshots the snapshot design left: `head - 1` as the previous, `head` as the current. */
const written = (f: SnapshotFiles, head: number) => {
  writeFileSync(f.previous, state(head - 1));
  writeFileSync(f.current, state(head));
};

test('the newest whole snapshot is loaded', async () => {
  const f = files();
  assert.deepEqual(await f.prepareLoad(), { damaged: [] });
  assert.equal(f.any(), false);
  written(f, 2);
  const choice = await f.prepareLoad();
  assert.equal(choice.load?.from, f.current);
  assert.equal(JSON.parse(readFileSync(choice.load!.path, 'utf8')).best_block_number, 2);
  f.removeLoadFile();
  assert.ok(!existsSync(f.loadFile));
});

test('a truncated current snapshot: the previous one is loaded and the damaged one moved aside', async () => {
  const f = files();
  written(f, 2);
  truncateSync(f.current, Math.floor(statSync(f.current).size / 2));
  const choice = await f.prepareLoad();
  assert.equal(choice.load?.from, f.previous);
  assert.equal(choice.damaged.length, 1);
  assert.equal(JSON.parse(readFileSync(choice.load!.path, 'utf8')).best_block_number, 1);
  assert.ok(existsSync(f.damagedCopy) && !existsSync(f.current));
});

test('a snapshot anvil refused (skipped) is passed over the same way', async () => {
  const f = files();
  written(f, 2);
  const choice = await f.prepareLoad(new Set([f.current]));
  assert.equal(choice.load?.from, f.previous);
});

test('no whole snapshot: nothing to load, but any() says a new chain must not replace them', async () => {
  const f = files();
  writeFileSync(f.current, 'not gzip');
  const choice = await f.prepareLoad();
  assert.equal(choice.load, undefined);
  assert.equal(choice.damaged.length, 1);
  assert.equal(f.any(), true);
});
