import type { RpcErrorObject } from '../errors/gateway-error.ts';

/**
 * A node's refusal of an eth_getLogs query for its size: its block range (`range`), or the logs or bytes it would
 * answer (`results`). `blocks` is the range the node says it takes, `results` the logs it says it answers, when the
 * words say so.
 */
export interface LogsRefusal {
  of: 'range' | 'results';
  blocks?: number;
  results?: number;
}

/** A number as providers write it: `10000`, `10,000`, `2K`, `10k`. */
const N = String.raw`(\d[\d,]*(?:\.\d+)?\s*[kK]?)`;

/**
 * The wordings of nodes and providers, each with what it says. Matched on the message, whatever the code: the same
 * words come as -32005 (Infura), -32000 (geth, Erigon), -32602 (Alchemy), -32614 (QuickNode), -32600 (others).
 */
const LOGS_WORDINGS: ReadonlyArray<{ re: RegExp; of: LogsRefusal['of']; blocks?: number; results?: number }> = [
  // geth, Infura: "query returned more than 10000 results" (Infura adds "Try with this block range [0x…, 0x…].").
  { re: new RegExp(String.raw`returned more than ${N} results`, 'i'), of: 'results', results: 1 },
  // Alchemy: "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit
  // on the response size, or … a cap of 10K logs in the response." Its range bound is the one always accepted.
  { re: new RegExp(String.raw`log response size exceeded(?:[^]*?up to an? ${N} block range)?(?:[^]*?cap of ${N} logs)?`, 'i'), of: 'results', blocks: 1, results: 2 },
  // Erigon and Alchemy-style nodes: "exceed maximum block range: 2000".
  { re: new RegExp(String.raw`exceed(?:s|ed)? (?:the )?max(?:imum)? block range(?: of|:)?\s*${N}?`, 'i'), of: 'range', blocks: 1 },
  // QuickNode: "eth_getLogs is limited to a 10,000 range".
  { re: new RegExp(String.raw`limited to an? ${N} (?:block )?range`, 'i'), of: 'range', blocks: 1 },
  // "block range too large", "block range is too wide (maximum 10)" (Frontier), "range too large, max 50000".
  { re: new RegExp(String.raw`range (?:is )?too (?:large|wide|big)(?:[^\d]{0,24}${N})?`, 'i'), of: 'range', blocks: 1 },
  // Chainstack and others: "Block range limit exceeded".
  { re: /block range limit exceeded/i, of: 'range' },
  // Other providers' words for an answer over their size: "response size exceeded", "too many logs".
  { re: /response (?:size|too large) exceeded|response is too (?:large|big)|too many (?:logs|results)/i, of: 'results' },
];

/** A number as providers write it, or undefined. */
export function readCount(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const t = text.replace(/[,\s]/g, '');
  const k = /k$/i.test(t);
  const n = Number(k ? t.slice(0, -1) : t);
  return Number.isFinite(n) && n > 0 ? Math.round(k ? n * 1000 : n) : undefined;
}

/** The node refused an eth_getLogs query for its size, in any of the wordings above; undefined otherwise. */
export function logsRefusal(error: RpcErrorObject | undefined): LogsRefusal | undefined {
  if (!error) return undefined;
  const message = String(error.message ?? '');
  for (const w of LOGS_WORDINGS) {
    const m = w.re.exec(message);
    if (!m) continue;
    const out: LogsRefusal = { of: w.of };
    const blocks = w.blocks === undefined ? undefined : readCount(m[w.blocks]);
    const results = w.results === undefined ? undefined : readCount(m[w.results]);
    if (blocks !== undefined) out.blocks = blocks;
    if (results !== undefined) out.results = results;
    return out;
  }
  return undefined;
}

/**
 * A node's refusal of a JSON-RPC batch for its size, as one error for the whole batch: geth "batch too large",
 * Alchemy "Batch size too large", Cloudflare "batch size limit exceeded", "maximum batch size is 100". `calls`: the
 * batch it says it takes, when the words say so.
 */
const BATCH_WORDINGS: readonly RegExp[] = [
  new RegExp(String.raw`max(?:imum)? batch (?:size|length|limit)(?: is| of|:)?\s*${N}`, 'i'),
  new RegExp(String.raw`batch (?:size |request )?(?:too large|limit exceeded|size limit exceeded|exceeds?)(?:[^\d]{0,24}${N})?`, 'i'),
  new RegExp(String.raw`batch(?:es| requests)? (?:are |is )?limited to ${N}`, 'i'),
];

/** The node refused a batch for its size; `calls`: the size it takes, when said. Undefined when it is no such refusal. */
export function batchRefusal(error: RpcErrorObject | undefined): { calls?: number } | undefined {
  if (!error) return undefined;
  const message = String(error.message ?? '');
  for (const re of BATCH_WORDINGS) {
    const m = re.exec(message);
    if (!m) continue;
    const calls = readCount(m[1]);
    return calls === undefined ? {} : { calls };
  }
  return undefined;
}
