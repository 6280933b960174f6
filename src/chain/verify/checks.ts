import type { VerifyRule } from '../../methods/method-spec.ts';
import { headerHash } from './header-hash.ts';
import { inBloom, logInBloom } from './logs-bloom.ts';
import { receiptsRoot } from './receipts-root.ts';

/** What a check knows of a block: its hash, logsBloom (bytes), receiptsRoot and transaction hashes in order. */
export interface Header {
  number: number;
  hash: string;
  logsBloom: Uint8Array;
  receiptsRoot: string;
  /** Its transactions' hashes in order; undefined when the block object had none to show. */
  transactions: readonly string[] | undefined;
}

/**
 * A block's header as the checks get it: one whose hash is its fields', `unsound` when the nodes asked gave only
 * blocks that are not (another hash, or not the agreed chain's), undefined when none could be asked or answered.
 */
export type HeaderFound = Header | 'unsound' | undefined;

/** What the checks may ask: a block's verified header (kept, or read), a final block's agreed hash, what is final. */
export interface CheckContext {
  header(n: number): HeaderFound | Promise<HeaderFound>;
  /** A block's header only when it is kept already (no read): for blocks an answer says nothing of. */
  kept(n: number): Header | undefined;
  knownHash(n: number): string | undefined;
  /** Block `n` is final: its hash is the agreed chain's for good (a hash that differs near the head may be a reorganisation). */
  final(n: number): boolean;
  /** `full`: receipts are checked against their block's receiptsRoot too. */
  full: boolean;
}

/** The name of the check an answer failed, or undefined when it passed (or there was nothing to check). */
export type Failed = string | undefined;

type Obj = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v) ? Number.parseInt(v.slice(2), 16) : undefined);
const same = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
const isHash = (v: unknown): v is string => typeof v === 'string' && v.length === 66;
const txHashOf = (t: unknown) => (typeof t === 'string' ? t : (t as Obj | null)?.hash);

/** Checks `result`, the answer to a call of a method whose spec's rule is `rule`, with `params`. */
export function check(rule: VerifyRule, params: unknown[], result: unknown, ctx: CheckContext): Failed | Promise<Failed> {
  if (result === null || result === undefined) return undefined; // an empty answer is an answer (lookups by hash are asked elsewhere)
  switch (rule) {
    case 'block': return checkBlock(params, result as Obj, ctx);
    case 'logs': return Array.isArray(result) ? checkLogs(params, result as Obj[], ctx) : 'logs-shape';
    case 'receipt': return checkReceipt(params, result as Obj, ctx);
    case 'receipts': return Array.isArray(result) ? checkReceipts(params, result as Obj[], ctx) : 'receipts-shape';
    case 'transaction': return checkTransaction(params, result as Obj, ctx);
  }
}

/** A header in an answer or read for the checks: the block's hash recomputed from its fields must be its `hash`. */
export function headerOf(b: Obj): Header | undefined {
  const n = num(b.number);
  if (n === undefined || typeof b.hash !== 'string' || typeof b.logsBloom !== 'string' || typeof b.receiptsRoot !== 'string') return undefined;
  const computed = headerHash(b);
  if (computed !== undefined && computed !== b.hash.toLowerCase()) return undefined;
  const txs = Array.isArray(b.transactions) ? b.transactions.map(txHashOf).filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase()) : undefined;
  return { number: n, hash: b.hash.toLowerCase(), logsBloom: hexBytes(b.logsBloom), receiptsRoot: b.receiptsRoot.toLowerCase(), transactions: txs };
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array((hex.length - 2) / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 + 2 * i, 4 + 2 * i), 16);
  return out;
}

/** A block: the number or hash asked, its header's own hash, the agreed chain's hash, its transactions in it. */
function checkBlock(params: unknown[], b: Obj, ctx: CheckContext): Failed {
  const asked = params[0];
  if (asked === 'pending') return undefined;
  const n = num(b.number);
  if (n === undefined || typeof b.hash !== 'string') return 'block-shape';
  if (isHash(asked) ? !same(asked, b.hash) : num(asked) !== undefined && num(asked) !== n) return 'block-number';
  // Its hash worked out from its fields (one keccak-256 of its header, no read), then the agreed chain's or the kept one.
  const computed = headerHash(b);
  if (computed !== undefined && computed !== b.hash.toLowerCase()) return 'block-hash';
  const known = ctx.knownHash(n) ?? (ctx.final(n) ? ctx.kept(n)?.hash : undefined);
  if (known !== undefined && !same(known, b.hash)) return 'block-canonical';
  if (Array.isArray(b.transactions)) {
    for (let i = 0; i < b.transactions.length; i++) {
      const t = b.transactions[i] as Obj | string;
      if (typeof t === 'string') continue;
      if (!same(t.blockHash, b.hash) || num(t.blockNumber) !== n || num(t.transactionIndex) !== i) return 'block-transactions';
    }
  }
  return undefined;
}

/** A set of values a log filter's field admits (an address or a topic: one, a list, or any). */
function admits(filter: unknown, value: unknown): boolean {
  if (filter === null || filter === undefined) return true;
  if (Array.isArray(filter)) return filter.length === 0 || filter.some((f) => f === null || same(f, value));
  return same(filter, value);
}

/** A filter field that admits anything (absent, null, an empty list or one holding null). */
const any = (filter: unknown) => filter === null || filter === undefined || (Array.isArray(filter) && (filter.length === 0 || filter.includes(null)));

/** Whether a block whose logsBloom is `bloom` may hold a log the filter admits (a bloom says "maybe" or "no"). */
function bloomAdmits(bloom: Uint8Array, address: unknown, topics: readonly unknown[]): boolean {
  const maybe = (filter: unknown) => any(filter) || (Array.isArray(filter) ? filter : [filter]).some((v) => typeof v === 'string' && inBloom(bloom, v));
  if (!maybe(address)) return false;
  for (const t of topics) if (!maybe(t)) return false;
  return bloom.some((x) => x !== 0);
}

/** Blocks of a range an answer with none of their logs is looked at for (against kept headers only: no read). */
const MISSING_SPAN = 1024;
/** Headers read for one answer at `cheap`: a wide range is checked on a run of blocks from a random one on. */
const CHEAP_READS = 16;

/**
 * Logs: in the asked range (or block) and filter, in order of block and index (an unfiltered query's numbered
 * 0, 1, 2... in each block), one hash per block (the agreed chain's when known), each in its block's logsBloom
 * (the header kept, or read); a block of the range whose header's bloom admits the filter has logs in the answer
 * (`logs-missing`: asked of another node, and the answer stands when that node has none either); its header is read
 * for an empty answer of a narrow range, else looked at when kept.
 */
function checkLogs(params: unknown[], logs: Obj[], ctx: CheckContext): Failed | Promise<Failed> {
  const f = (params[0] ?? {}) as Obj;
  const from = f.fromBlock === 'earliest' ? 0 : num(f.fromBlock);
  const to = num(f.toBlock);
  const topics = Array.isArray(f.topics) ? f.topics : [];
  const whole = any(f.address) && topics.every(any);
  let prevBlock = -1;
  let prevIndex = -1;
  let prevHash: unknown;
  const blocks = new Map<number, Obj[]>();
  for (const log of logs) {
    const n = num(log.blockNumber);
    const i = num(log.logIndex);
    if (n === undefined || i === undefined || typeof log.blockHash !== 'string') return 'logs-shape';
    if ((from !== undefined && n < from) || (to !== undefined && n > to) || (isHash(f.blockHash) && !same(f.blockHash, log.blockHash))) return 'log-range';
    if (!admits(f.address, log.address) || !Array.isArray(log.topics)) return 'log-filter';
    for (let t = 0; t < topics.length; t++) if (!admits(topics[t], log.topics[t])) return 'log-filter';
    if (n < prevBlock || (n === prevBlock && i <= prevIndex)) return 'log-order';
    if (whole && i !== (n === prevBlock ? prevIndex + 1 : 0)) return 'log-index';
    if (n === prevBlock && !same(prevHash, log.blockHash)) return 'log-block';
    const known = n !== prevBlock ? ctx.knownHash(n) : undefined;
    if (known !== undefined && !same(known, log.blockHash)) return 'log-canonical';
    if (n !== prevBlock) blocks.set(n, []);
    blocks.get(n)!.push(log);
    prevBlock = n;
    prevIndex = i;
    prevHash = log.blockHash;
  }
  const waits: Array<Promise<Failed>> = [];
  let doubt: Failed;
  if (from !== undefined && to !== undefined && to - from < MISSING_SPAN) {
    // An empty answer of a narrow range has its blocks' headers read when not kept (within the answer's reads); any
    // other answer's blocks without logs are looked at when kept.
    const read = logs.length === 0 && to - from < CHEAP_READS;
    for (let n = from; n <= to; n++) {
      if (blocks.has(n)) continue;
      const found = ctx.kept(n) ?? (read ? ctx.header(n) : undefined);
      const missing = (h: HeaderFound): Failed => (typeof h === 'object' && bloomAdmits(h.logsBloom, f.address, topics) ? 'logs-missing' : undefined);
      if (found instanceof Promise) waits.push(found.then(missing));
      else doubt ??= missing(found);
    }
  }
  const failed = inBlocks(blocks, ctx);
  if (waits.length === 0) return failed instanceof Promise ? failed.then((lie) => lie ?? doubt) : failed ?? doubt;
  if (doubt) waits.push(Promise.resolve(doubt));
  // A lie found in the logs given outweighs a doubt about those missing.
  return Promise.all([failed, ...waits]).then(([lie, ...doubts]) => lie ?? doubts.find((x) => x !== undefined));
}

/** Each block's logs against its header: the same hash (a final block's), and in its logsBloom. */
function inBlocks(blocks: Map<number, Obj[]>, ctx: CheckContext): Failed | Promise<Failed> {
  const waits: Array<Promise<Failed>> = [];
  const order = [...blocks.keys()];
  // At `cheap`, a wide answer reads headers for a run of its blocks from a random one on (kept ones cost nothing).
  const from = !ctx.full && order.length > CHEAP_READS ? Math.floor(Math.random() * order.length) : 0;
  let reads = 0;
  for (let k = 0; k < order.length; k++) {
    const n = order[(from + k) % order.length];
    const logs = blocks.get(n)!;
    const against = (h: Header): Failed => {
      for (const log of logs) if (!logInBloom(h.logsBloom, log)) return 'log-bloom';
      return undefined;
    };
    let found: HeaderFound | Promise<HeaderFound> = ctx.kept(n);
    if (found === undefined && (ctx.full || reads++ < CHEAP_READS)) found = ctx.header(n);
    const failed = judged(found, n, logs[0].blockHash, ctx, 'log-block', against);
    if (failed instanceof Promise) waits.push(failed);
    else if (failed) return failed;
  }
  return waits.length === 0 ? undefined : Promise.all(waits).then((all) => all.find((x) => x !== undefined));
}

/**
 * An answer's block (number `n`, hash `hash`) against its header: `block-header` when the nodes gave only unsound
 * ones, `mismatch` when a final block's hash is another, else what `more` says of it. Nothing is said without a
 * header, nor of a block near the head on another branch (a reorganisation may be under way).
 */
function judged(found: HeaderFound | Promise<HeaderFound>, n: number, hash: unknown, ctx: CheckContext, mismatch: string, more: (h: Header) => Failed): Failed | Promise<Failed> {
  const judge = (h: HeaderFound): Failed => {
    if (h === undefined) return undefined;
    if (h === 'unsound') return 'block-header';
    if (!same(h.hash, hash)) return ctx.final(n) ? mismatch : undefined;
    return more(h);
  };
  return found instanceof Promise ? found.then(judge) : judge(found);
}

/** A receipt: of the asked transaction, its logs its own and in order, in the block it names. */
function checkReceipt(params: unknown[], r: Obj, ctx: CheckContext): Failed | Promise<Failed> {
  if (!same(r.transactionHash, params[0])) return 'receipt-tx';
  const n = num(r.blockNumber);
  const index = num(r.transactionIndex);
  if (n === undefined || index === undefined || typeof r.blockHash !== 'string' || !Array.isArray(r.logs)) return 'receipt-shape';
  let prev: number | undefined;
  for (const log of r.logs as Obj[]) {
    const i = num(log.logIndex);
    if (!same(log.blockHash, r.blockHash) || !same(log.transactionHash, r.transactionHash) || num(log.blockNumber) !== n) return 'receipt-logs';
    if (i === undefined || (prev !== undefined && i !== prev + 1)) return 'log-order';
    prev = i;
  }
  const known = ctx.knownHash(n);
  if (known !== undefined && !same(known, r.blockHash)) return 'receipt-canonical';
  return judged(ctx.header(n), n, r.blockHash, ctx, 'receipt-block', (h) => {
    if (h.transactions !== undefined && !same(h.transactions[index], r.transactionHash)) return 'receipt-block';
    for (const log of r.logs as Obj[]) if (!logInBloom(h.logsBloom, log)) return 'log-bloom';
    return undefined;
  });
}

/**
 * A block's receipts: of the block asked, in order, their logs numbered from 0 across them, the block's
 * transactions one for one; at `full`, their trie's root is the block's receiptsRoot.
 */
function checkReceipts(params: unknown[], rs: Obj[], ctx: CheckContext): Failed | Promise<Failed> {
  if (rs.length === 0) return undefined;
  const hash = rs[0].blockHash;
  const n = num(rs[0].blockNumber);
  if (n === undefined || typeof hash !== 'string') return 'receipts-shape';
  const asked = params[0];
  const askedHash = isHash(asked) ? asked : (asked as Obj | null)?.blockHash;
  const askedNumber = isHash(asked) ? undefined : num(asked) ?? num((asked as Obj | null)?.blockNumber);
  if ((askedHash !== undefined && !same(askedHash, hash)) || (askedNumber !== undefined && askedNumber !== n)) return 'receipts-block';
  let logIndex = 0;
  for (let i = 0; i < rs.length; i++) {
    const r = rs[i];
    if (!same(r.blockHash, hash) || num(r.blockNumber) !== n || num(r.transactionIndex) !== i || !Array.isArray(r.logs)) return 'receipts-order';
    for (const log of r.logs as Obj[]) {
      if (num(log.logIndex) !== logIndex++ || !same(log.blockHash, hash)) return 'log-order';
    }
  }
  const known = ctx.knownHash(n);
  if (known !== undefined && !same(known, hash)) return 'receipts-canonical';
  return judged(ctx.header(n), n, hash, ctx, 'receipts-block', (h) => {
    const txs = h.transactions;
    if (txs !== undefined && (txs.length !== rs.length || rs.some((r, i) => !same(r.transactionHash, txs[i])))) return 'receipts-block';
    for (const r of rs) for (const log of r.logs as Obj[]) if (!logInBloom(h.logsBloom, log)) return 'log-bloom';
    if (ctx.full && receiptsRoot(rs as never) !== h.receiptsRoot) return 'receipts-root';
    return undefined;
  });
}

/** A transaction: the one asked (by hash, or by block and index), in the block it names. */
function checkTransaction(params: unknown[], t: Obj, ctx: CheckContext): Failed | Promise<Failed> {
  if (params.length === 1 && !same(t.hash, params[0])) return 'tx-hash';
  const n = num(t.blockNumber);
  const index = num(t.transactionIndex);
  if (params.length === 2) {
    const asked = params[0];
    if ((isHash(asked) ? !same(asked, t.blockHash) : num(asked) !== undefined && num(asked) !== n) || num(params[1]) !== index) return 'tx-block';
  }
  if (n === undefined || index === undefined) return undefined; // pending
  const known = ctx.knownHash(n);
  if (known !== undefined && !same(known, t.blockHash)) return 'tx-canonical';
  return judged(ctx.header(n), n, t.blockHash, ctx, 'tx-block', (h) => (h.transactions !== undefined && !same(h.transactions[index], t.hash) ? 'tx-block' : undefined));
}
