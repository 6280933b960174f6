import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { FramedItem } from './framing.ts';
import { answerParts, responseJson } from './respond.ts';
import { SMALL_BYTES, type RequestBytes } from './response-budget.ts';

/** An item's answer, and the HTTP status it would give if it were the only one. */
export interface Answer { answer: UpstreamAnswer; status: number }

/**
 * Stage respond: one object with its item's status, or an array with 200; 204 when only notifications.
 * `pieces[i]`: item i's answer already serialised (and counted in `held`); items without one (errors, which are
 * small) are serialised here. A large batch answer is written as a stream of its pieces, never joined into one
 * string (issue 17: 40 answers of 14.8 MB made "Invalid string length"); what `held` took of the budget shared by
 * all requests is given back when the response is done or the client went away.
 */
export function sendAnswers(reply: FastifyReply, batch: boolean, items: FramedItem[], answers: Answer[], pieces: Array<string | Buffer | undefined>, held: RequestBytes): FastifyReply {
  if (held.holdsTotal) reply.raw.once('close', () => held.release());
  if (!batch) {
    if (items[0].notification) return reply.code(204).send();
    return reply.code(answers[0].status).type('application/json').send(pieces[0] ?? responseJson(items[0].id, answers[0].answer));
  }
  const parts = answerParts(items, answers, pieces);
  if (parts.length === 0) return reply.code(204).send();
  reply.code(200).type('application/json');
  if (held.bytes <= SMALL_BYTES) return reply.send(`[${parts.join(',')}]`);
  let length = parts.length + 1; // brackets and commas
  for (const p of parts) length += typeof p === 'string' ? Buffer.byteLength(p) : p.length;
  reply.header('content-length', String(length));
  return reply.send(Readable.from(chunks(parts), { objectMode: false }));
}

/** `[`, the pieces separated by commas, `]`; each piece is let go once handed to the socket. */
function* chunks(parts: Array<string | Buffer>): Generator<string | Buffer> {
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    parts[i] = '';
    yield i === 0 ? '[' : ',';
    yield p;
  }
  yield ']';
}
