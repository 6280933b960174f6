/**
 * The options of each webhook kind, checked when a webhook is made or changed (a `logs` address "0x123"
 * was accepted and could never match). A problem names the field it is in (`options.addresses[0]`), so the API's
 * error and the dashboard's form point at it.
 */

/** Addresses, topics or hashes one list may hold: each is work for the producer on every block. */
export const MAX_WATCHED = 1000;
/** Alternatives at one topic position of a `logs` filter (as eth_newFilter: [[a, b], null, c]). */
const MAX_TOPIC_CHOICES = 100;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const NOT_ADDRESS = 'not an address (0x and 40 hex digits)';
const NOT_TOPIC = 'not a topic (0x and 64 hex digits) or null';
const NOT_HASH = 'not a transaction hash (0x and 64 hex digits)';

/** What is wrong with a webhook's options, and where. */
export interface OptionsProblem {
  field: string;
  message: string;
}

/** The option names each kind takes (none: the kind takes no options). */
const ALLOWED: Record<string, readonly string[]> = {
  'block.mined': [],
  logs: ['address', 'topics'],
  'address.activity': ['addresses'],
  'transaction.mined': ['hashes'],
  'usage.threshold': [],
};

/** The first problem with `options` for a webhook of `kind` (a kind in WEBHOOK_KINDS), or undefined when they are good. */
export function checkOptions(kind: string, options: Record<string, unknown>): OptionsProblem | undefined {
  const allowed = ALLOWED[kind] ?? [];
  for (const name of Object.keys(options)) {
    if (!allowed.includes(name)) {
      const takes = allowed.length === 0 ? 'takes no options' : `takes ${allowed.join(', ')}`;
      return { field: `options.${name}`, message: `not an option of ${kind} webhooks (it ${takes})` };
    }
  }
  if (kind === 'logs') return logsProblem(options);
  if (kind === 'address.activity') return listProblem('options.addresses', options.addresses, ADDRESS, NOT_ADDRESS, 'addresses');
  if (kind === 'transaction.mined') return listProblem('options.hashes', options.hashes, HASH, NOT_HASH, 'transaction hashes');
  return undefined;
}

/** A required list of 1 to MAX_WATCHED strings, each matching `pattern`. */
function listProblem(field: string, list: unknown, pattern: RegExp, notOne: string, what: string): OptionsProblem | undefined {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_WATCHED) {
    return { field, message: `a list of 1 to ${MAX_WATCHED.toLocaleString('en-US')} ${what} is required` };
  }
  const bad = list.findIndex((x) => typeof x !== 'string' || !pattern.test(x));
  return bad === -1 ? undefined : { field: `${field}[${bad}]`, message: notOne };
}

/** `logs`: optional `address` (one, or a list as eth_newFilter) and optional `topics` (up to 4 positions). */
function logsProblem(o: Record<string, unknown>): OptionsProblem | undefined {
  if (o.address !== undefined && o.address !== null) {
    if (typeof o.address === 'string') {
      if (!ADDRESS.test(o.address)) return { field: 'options.address', message: NOT_ADDRESS };
    } else {
      const p = listProblem('options.address', o.address, ADDRESS, NOT_ADDRESS, 'addresses');
      if (p) return { ...p, message: p.field === 'options.address' ? `an address or ${p.message.replace(' is required', '')}` : p.message };
    }
  }
  if (o.topics === undefined || o.topics === null) return undefined;
  if (!Array.isArray(o.topics) || o.topics.length > 4) return { field: 'options.topics', message: 'a list of at most 4 topic positions' };
  for (const [i, t] of o.topics.entries()) {
    if (t === null || (typeof t === 'string' && HASH.test(t))) continue;
    if (!Array.isArray(t)) return { field: `options.topics[${i}]`, message: NOT_TOPIC };
    if (t.length > MAX_TOPIC_CHOICES) return { field: `options.topics[${i}]`, message: `at most ${MAX_TOPIC_CHOICES} topics at one position` };
    const bad = t.findIndex((x) => typeof x !== 'string' || !HASH.test(x));
    if (bad !== -1) return { field: `options.topics[${i}][${bad}]`, message: NOT_TOPIC };
  }
  return undefined;
}
