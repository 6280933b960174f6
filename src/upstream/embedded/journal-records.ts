import { crc32 } from 'node:zlib';

/** One mined block as journaled: enough to mine it again with the same content, timestamp and hash. */
export interface JournalBlock {
  block: number;
  /** Block timestamp, seconds. */
  ts: number;
  hash: string;
  /** Transaction hashes and their signed raw transactions, in block order. */
  txs: Array<[hash: string, raw: string]>;
}

export type JournalEntry =
  /** A transaction taken for the chain: written before anvil sees it. */
  | { kind: 'tx'; hash: string; raw: string }
  /** A transaction written as taken that anvil refused: it is never sent again. */
  | { kind: 'drop'; hash: string }
  | { kind: 'block'; block: JournalBlock }
  /** The chain up to `block` (under `hash`) is in the checkpoint file `file`, in the chain's folder. */
  | { kind: 'checkpoint'; block: number; hash: string; file: string };

/**
 * A record is one line: `<seq> <length> <crc32> <json>\n`. The sequence number makes a lost or repeated record
 * visible, the length and checksum a torn or altered one; the JSON body stays readable with `cut -d' ' -f4-`.
 */
export function encodeRecord(seq: number, e: JournalEntry): Buffer {
  const json = JSON.stringify(body(e));
  return Buffer.from(`${seq} ${Buffer.byteLength(json)} ${checksum(seq, json)} ${json}\n`);
}

/** The record of one line (without its newline), or why it is not one. */
export function decodeRecord(line: string): { seq: number; entry: JournalEntry } | { damaged: string } {
  const a = line.indexOf(' ');
  const b = line.indexOf(' ', a + 1);
  const c = line.indexOf(' ', b + 1);
  if (a <= 0 || b < 0 || c < 0) return { damaged: 'not a record' };
  const seq = Number(line.slice(0, a));
  const length = Number(line.slice(a + 1, b));
  const json = line.slice(c + 1);
  if (!Number.isSafeInteger(seq) || seq <= 0) return { damaged: 'no sequence number' };
  if (Buffer.byteLength(json) !== length) return { damaged: `length ${Buffer.byteLength(json)}, recorded ${length}` };
  if (line.slice(b + 1, c) !== checksum(seq, json)) return { damaged: 'checksum mismatch' };
  let o: any;
  try { o = JSON.parse(json); } catch { return { damaged: 'body is not JSON' }; }
  const entry = entryOf(o);
  return entry ? { seq, entry } : { damaged: 'unknown record' };
}

/** An entry of the first design's journal (`chain.ndjson`: plain JSON lines, unchecked), when the line is one. */
export function entryOfPlainLine(line: string): JournalEntry | undefined {
  try { return entryOf(JSON.parse(line)); } catch { return undefined; }
}

function checksum(seq: number, json: string): string {
  return crc32(`${seq} ${json}`).toString(16).padStart(8, '0');
}

function body(e: JournalEntry): unknown {
  switch (e.kind) {
    case 'tx': return { tx: e.hash, raw: e.raw };
    case 'drop': return { drop: e.hash };
    case 'block': return e.block;
    case 'checkpoint': return { checkpoint: e.block, hash: e.hash, file: e.file };
  }
}

function entryOf(o: any): JournalEntry | undefined {
  if (typeof o?.tx === 'string' && typeof o.raw === 'string') return { kind: 'tx', hash: o.tx, raw: o.raw };
  if (typeof o?.drop === 'string') return { kind: 'drop', hash: o.drop };
  if (Number.isSafeInteger(o?.checkpoint) && typeof o.hash === 'string' && typeof o.file === 'string') {
    return { kind: 'checkpoint', block: o.checkpoint, hash: o.hash, file: o.file };
  }
  if (Number.isSafeInteger(o?.block) && Number.isSafeInteger(o.ts) && typeof o.hash === 'string' && Array.isArray(o.txs)) {
    return { kind: 'block', block: { block: o.block, ts: o.ts, hash: o.hash, txs: o.txs } };
  }
  return undefined;
}
