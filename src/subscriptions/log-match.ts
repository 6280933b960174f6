import { GatewayError } from '../errors/gateway-error.ts';

/** A log as a node gives it (the fields a subscription's filter reads). */
export interface Log {
  address?: string;
  topics?: string[];
  [field: string]: unknown;
}

/** A `logs` subscription's filter: addresses (any of), and per topic position any of some values (null: any). */
export interface LogFilter {
  addresses: ReadonlySet<string> | undefined;
  topics: Array<ReadonlySet<string> | undefined>;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOPIC = /^0x[0-9a-fA-F]{64}$/;

const bad = (detail: string) => new GatewayError('INVALID_PARAMS', { detail });

/** eth_subscribe("logs", {address, topics}) as geth reads it: address one or many; up to 4 topic positions. */
export function parseLogFilter(raw: unknown): LogFilter {
  if (raw === undefined || raw === null) return { addresses: undefined, topics: [] };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw bad('the logs filter is an object {address, topics}');
  const { address, topics } = raw as { address?: unknown; topics?: unknown };
  let addresses: Set<string> | undefined;
  if (address !== undefined && address !== null) {
    const list = Array.isArray(address) ? address : [address];
    if (!list.every((a) => typeof a === 'string' && ADDRESS.test(a))) throw bad('address: a 20-byte hex address, or a list of them');
    if (list.length > 0) addresses = new Set(list.map((a) => (a as string).toLowerCase()));
  }
  const positions: Array<Set<string> | undefined> = [];
  if (topics !== undefined && topics !== null) {
    if (!Array.isArray(topics) || topics.length > 4) throw bad('topics: a list of at most 4 positions');
    for (const t of topics) {
      if (t === null) { positions.push(undefined); continue; }
      const list = Array.isArray(t) ? t : [t];
      if (!list.every((x) => typeof x === 'string' && TOPIC.test(x))) throw bad('topics: each position null, a 32-byte hex topic, or a list of them');
      positions.push(list.length > 0 ? new Set(list.map((x) => (x as string).toLowerCase())) : undefined);
    }
  }
  return { addresses, topics: positions };
}

/** Whether `log` is one the filter asks for. */
export function logMatches(f: LogFilter, log: Log): boolean {
  if (f.addresses && !f.addresses.has(String(log.address).toLowerCase())) return false;
  for (let i = 0; i < f.topics.length; i++) {
    const want = f.topics[i];
    if (want && !want.has(String(log.topics?.[i]).toLowerCase())) return false;
  }
  return true;
}
