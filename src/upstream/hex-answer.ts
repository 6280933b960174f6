import type { UpstreamAnswer } from './upstream.ts';

/** Below this an answer is parsed as any other: the saving is in the large ones. */
const LARGE = 64 * 1024;
const HEX_DIGITS = /^[0-9a-fA-F]*$/;

/**
 * A large answer whose result is one hex string (`eth_call` returning much data, `eth_getCode`, raw transactions
 * and blocks), taken from the node's text without JSON.parse: the result and its JSON text are both slices of the
 * text, so the answer costs no copy of its result. JSON.parse makes one (a 4 MiB string per 4 MiB answer, in the
 * old generation, held until a full collection): most of the memory a burst of large answers would take. The
 * text must be exactly `{"jsonrpc":"2.0","id":ID,"result":"0x…"}` (what anvil, geth and reth send), its digits
 * only hex: then it is valid JSON and that is its whole meaning. Anything else: undefined, parsed as usual.
 */
export function hexAnswer(text: string, id: number): UpstreamAnswer | undefined {
  if (text.length < LARGE) return undefined;
  const head = `{"jsonrpc":"2.0","id":${id},"result":"0x`;
  if (!text.startsWith(head)) return undefined;
  let end = text.length - 1;
  while (end > head.length && text.charCodeAt(end) <= 32) end--; // geth ends its answers with a newline
  if (text.charCodeAt(end) !== 125 /* } */ || text.charCodeAt(end - 1) !== 34 /* " */) return undefined;
  const digits = text.slice(head.length, end - 1);
  if (!HEX_DIGITS.test(digits)) return undefined;
  return { result: text.slice(head.length - 2, end - 1), raw: text.slice(head.length - 3, end) };
}
