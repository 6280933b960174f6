import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ChainJournal, JournalDamagedError, type JournalEntry } from './chain-journal.ts';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const dir = () => { const d = mkdtempSync(join(tmpdir(), 'nodegate-journal-')); dirs.push(d); return d; };
const all = (j: ChainJournal) => [...j.entries()];
const blocksOf = (es: JournalEntry[]) => es.flatMap((e) => (e.kind === 'block' ? [e.block.block] : []));
const block = (n: number, txs: Array<[string, string]> = []) => ({ block: n, ts: 100 + n, hash: `0xh${n}`, txs });

async function journalWith(n: number): Promise<ChainJournal> {
  const j = new ChainJournal(dir());
  await j.open();
  for (let i = 1; i <= n; i++) j.appendBlock(block(i));
  await j.durable();
  j.close();
  return j;
}

test('reopened, the journal knows its last block and the accepted transactions in no block yet', async () => {
  const d = dir();
  const j = new ChainJournal(d);
  await j.open();
  assert.equal(j.appendTx('0xa', '0x01'), true);
  assert.equal(j.appendTx('0xa', '0x01'), false, 'a repeated send writes nothing');
  j.appendTx('0xb', '0x02');
  j.appendTx('0xc', '0x03');
  j.appendDrop('0xc');
  j.appendBlock(block(1, [['0xa', '0x01']]));
  await j.durable();
  j.close();
  const k = new ChainJournal(d);
  await k.open();
  assert.equal(k.lastBlock, 1);
  assert.deepEqual(k.pendingRaws(), ['0x02'], 'mined and dropped transactions are not pending');
  assert.equal(k.pendingRaw('0xb'), '0x02');
  assert.equal(all(k).length, 5);
  k.close();
});

test('a record torn by a crash at the end is cut off, and the next record starts clean', async () => {
  const j = await journalWith(2);
  const whole = readFileSync(j.path, 'utf8');
  appendFileSync(j.path, '3 80 0badc0de {"block":3,"ts":1');
  const k = new ChainJournal(j.dir);
  await k.open();
  assert.equal(k.lastBlock, 2);
  assert.equal(k.tornBytes, 31);
  assert.equal(readFileSync(j.path, 'utf8'), whole, 'the torn bytes are gone from the file');
  k.appendBlock(block(3));
  k.close();
  const m = new ChainJournal(j.dir);
  await m.open();
  assert.deepEqual(blocksOf(all(m)), [1, 2, 3]);
  m.close();
});

test('a damaged record in the middle stops the open, naming where; nothing is cut', async () => {
  const j = await journalWith(3);
  const lines = readFileSync(j.path, 'utf8').split('\n');
  lines[1] = lines[1]!.replace('"ts":102', '"ts":103');
  writeFileSync(j.path, lines.join('\n'));
  const size = readFileSync(j.path).length;
  const k = new ChainJournal(j.dir);
  await assert.rejects(k.open(), (err: Error) => err instanceof JournalDamagedError && /damaged at byte \d+ \(checksum mismatch\)/.test(err.message));
  k.close();
  assert.equal(readFileSync(j.path).length, size, 'the journal is left as it was for the operator');
});

test('a missing record and a block out of order each stop the open', async () => {
  const j = await journalWith(3);
  const lines = readFileSync(j.path, 'utf8').split('\n');
  writeFileSync(j.path, [lines[0], lines[2], ''].join('\n'));
  await assert.rejects(new ChainJournal(j.dir).open(), /record #2 is missing/);

  const k = new ChainJournal(dir());
  await k.open();
  k.appendBlock(block(1));
  assert.throws(() => k.appendBlock(block(3)), /block 3 journaled after block 1/);
  k.close();
});

test('a journal of the first design (plain JSON lines) is brought into checked records once', async () => {
  const d = dir();
  writeFileSync(join(d, 'chain.ndjson'), [
    JSON.stringify({ tx: '0xa', raw: '0x01' }),
    JSON.stringify(block(1, [['0xa', '0x01']])),
    '{"block":2,"ts":1',
    JSON.stringify(block(2)),
    JSON.stringify({ tx: '0xb', raw: '0x02' }),
  ].join('\n'));
  const j = new ChainJournal(d);
  assert.equal(j.exists(), true);
  await j.open();
  assert.equal(j.lastBlock, 2);
  assert.deepEqual(j.pendingRaws(), ['0x02']);
  assert.equal(existsSync(join(d, 'chain.ndjson')), false);
  j.close();
});

test('a checkpoint record is remembered with the one before it', async () => {
  const d = dir();
  const j = new ChainJournal(d);
  await j.open();
  j.appendBlock(block(1));
  j.appendCheckpoint('checkpoint-1.json.gz', j.checkpointable());
  j.appendBlock(block(2));
  const at = j.checkpointable();
  j.appendBlock(block(3));
  j.appendCheckpoint('checkpoint-2.json.gz', at);
  j.close();
  const k = new ChainJournal(d);
  await k.open();
  assert.deepEqual(k.checkpoint, { block: 2, hash: '0xh2', file: 'checkpoint-2.json.gz' });
  assert.deepEqual(k.previousCheckpoint, { block: 1, hash: '0xh1', file: 'checkpoint-1.json.gz' });
  assert.equal(k.lastBlock, 3);
  k.close();
});
