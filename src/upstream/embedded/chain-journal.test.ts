import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ChainJournal, type JournalEntry } from './chain-journal.ts';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const dir = () => { const d = mkdtempSync(join(tmpdir(), 'nodegate-journal-')); dirs.push(d); return d; };
const all = async (j: ChainJournal) => { const out: JournalEntry[] = []; for await (const e of j.entries()) out.push(e); return out; };

test('reopened, the journal knows its last block and the accepted transactions in no block yet', async () => {
  const d = dir();
  const j = new ChainJournal(d);
  await j.open();
  j.appendTx('0xa', '0x01');
  j.appendTx('0xb', '0x02');
  j.appendBlock({ block: 1, ts: 100, hash: '0xh1', txs: [['0xa', '0x01']] });
  j.close();
  const k = new ChainJournal(d);
  await k.open();
  assert.equal(k.lastBlock, 1);
  assert.deepEqual(k.pendingRaws(), ['0x02'], 'the transaction mined in block 1 is not pending');
  assert.equal(k.pendingRaw('0xb'), '0x02');
  assert.equal((await all(k)).length, 3);
  k.close();
});

test('a line torn by a power cut is skipped, and the next line is not glued to it', async () => {
  const d = dir();
  const j = new ChainJournal(d);
  await j.open();
  j.appendBlock({ block: 1, ts: 100, hash: '0xh1', txs: [] });
  j.close();
  appendFileSync(j.path, '{"block":2,"ts":1');
  const k = new ChainJournal(d);
  await k.open();
  assert.equal(k.lastBlock, 1);
  assert.equal(k.damagedLines, 1);
  k.appendBlock({ block: 2, ts: 101, hash: '0xh2', txs: [] });
  k.close();
  const blocks = (await all(k)).filter((e) => e.kind === 'block').map((e) => (e as { block: { block: number } }).block.block);
  assert.deepEqual(blocks, [1, 2]);
  assert.equal(readFileSync(j.path, 'utf8').split('\n').filter(Boolean).length, 3);
});
