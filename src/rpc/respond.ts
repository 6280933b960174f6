import { Buffer } from 'node:buffer';
import type { GatewayError, RpcErrorObject } from '../errors/gateway-error.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { frameBody, type FramedItem, type RpcId } from './framing.ts';

/** An item's answer, and the HTTP status it would give if it were the only one. */
export interface Answer { answer: UpstreamAnswer; status: number }

const idText = (id: RpcId): string => (typeof id === 'number' ? String(id) : typeof id === 'string' ? JSON.stringify(id) : id === null ? 'null' : id.json);

/** Serialises one response object; the id is echoed with its type kept (docs/decisions.md §3). */
export function responseJson(id: RpcId, answer: UpstreamAnswer): string {
  const idJson = idText(id);
  if (answer.error !== undefined) return `{"jsonrpc":"2.0","id":${idJson},"error":${JSON.stringify(errorObject(answer.error))}}`;
  const result = answer.raw ?? (answer.result === undefined ? 'null' : JSON.stringify(answer.result));
  return `{"jsonrpc":"2.0","id":${idJson},"result":${result}}`;
}

/**
 * A large answer's response object as bytes, `resultBytes` being its result's length in UTF-8: the node's text of
 * the result is written straight into the buffer. Made into bytes from one string, it was first copied whole into a
 * flat string (the envelope and the result joined), one more copy of every large answer for the collector.
 */
export function responseBytes(id: RpcId, answer: UpstreamAnswer & { raw: string }, resultBytes: number): Buffer {
  const head = `{"jsonrpc":"2.0","id":${idText(id)},"result":`;
  const b = Buffer.allocUnsafe(head.length * 3 + resultBytes + 1);
  let at = b.write(head);
  at += b.write(answer.raw, at);
  b[at++] = 0x7d; // }
  return b.subarray(0, at);
}

function errorObject(e: RpcErrorObject | { toJSON(): RpcErrorObject }): RpcErrorObject {
  return 'toJSON' in e && typeof e.toJSON === 'function' ? e.toJSON() : (e as RpcErrorObject);
}

/**
 * A request's answers as one JSON text, for a transport that sends messages (a socket): the single answer, or the
 * batch's array; undefined when every item was a notification. Pieces already serialised are used as they are: a
 * large answer's bytes (a Buffer) are sent as they are, not made into a string and back into bytes (two more copies
 * of every large answer, held until the collector runs).
 */
export function answersText(batch: boolean, items: FramedItem[], answers: Array<{ answer: UpstreamAnswer }>, pieces: Array<string | Buffer | undefined>): string | Buffer | undefined {
  const parts = answerParts(items, answers, pieces);
  if (parts.length === 0) return undefined;
  if (!batch) return parts[0];
  if (!parts.some((p) => typeof p !== 'string')) return `[${parts.join(',')}]`;
  const bytes: Buffer[] = [OPEN];
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) bytes.push(COMMA);
    const p = parts[i];
    bytes.push(typeof p === 'string' ? Buffer.from(p) : p);
  }
  bytes.push(CLOSE);
  return Buffer.concat(bytes);
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The serialised answers of the items that are not notifications, in order (pieces already made are used as they are). */
export function answerParts(items: FramedItem[], answers: Array<{ answer: UpstreamAnswer }>, pieces: Array<string | Buffer | undefined>): Array<string | Buffer> {
  const parts: Array<string | Buffer> = [];
  for (let i = 0; i < items.length; i++) if (!items[i].notification) parts.push(pieces[i] ?? responseJson(items[i].id, answers[i].answer));
  return parts;
}

/**
 * A whole request's refusal as a message: the error under each id the body holds (a socket's client matches
 * answers by id, and one under id null would leave its call waiting); under id null when the body cannot be read.
 */
export function refusalText(error: GatewayError, id: RpcId, body: Buffer, maxBatch: number): string | undefined {
  const answer = { error: error.toJSON() };
  let framed;
  try {
    framed = frameBody(body, maxBatch);
  } catch {
    return responseJson(id, answer);
  }
  const parts = framed.items.filter((i) => !i.notification).map((i) => responseJson(i.id, answer));
  if (parts.length === 0) return undefined;
  return framed.batch ? `[${parts.join(',')}]` : parts[0];
}
