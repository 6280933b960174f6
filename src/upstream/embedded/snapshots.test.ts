import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { SnapshotFiles } from './snapshots.ts';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const files = () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-snap-'));
  dirs.push(dir);
  return new SnapshotFiles(dir);
};
const state = (head: number) => gzipSync(JSON.stringify({ best_block_number: head, pad: 'x'.repeat(2000) }));

test('write keeps the replaced snapshot as the previous one; the newest whole one is loaded', async () => {
  const f = files();
  assert.deepEqual(await f.prepareLoad(), { damaged: [] });
  assert.equal(f.any(), false);
  f.write(state(1));
  f.write(state(2));
  const choice = await f.prepareLoad();
  assert.equal(choice.load?.from, f.current);
  assert.equal(JSON.parse(readFileSync(choice.load!.path, 'utf8')).best_block_number, 2);
  f.removeLoadFile();
  assert.ok(!existsSync(f.loadFile));
});

test('a truncated current snapshot: the previous one is loaded and the damaged one moved aside', async () => {
  const f = files();
  f.write(state(1));
  f.write(state(2));
  truncateSync(f.current, Math.floor(statSync(f.current).size / 2));
  const choice = await f.prepareLoad();
  assert.equal(choice.load?.from, f.previous);
  assert.equal(choice.damaged.length, 1);
  assert.equal(JSON.parse(readFileSync(choice.load!.path, 'utf8')).best_block_number, 1);
  assert.ok(existsSync(f.damagedCopy) && !existsSync(f.current));
  // The next snapshot does not push the good previous copy out.
  f.write(state(3));
  assert.equal(JSON.parse(gunzipSync(readFileSync(f.previous)).toString()).best_block_number, 1);
});

test('a snapshot anvil refused (skipped) is passed over the same way', async () => {
  const f = files();
  f.write(state(1));
  f.write(state(2));
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
