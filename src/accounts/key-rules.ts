import { invalidAllowlistEntries } from '../auth/ip-allowlist.ts';
import { importJwtKey, type JwtKeyInput } from '../auth/jwt-public-key.ts';
import { MAX_JWT_KEYS, type JwtPublicKey } from '../store/keys/api-key.ts';
import type { KeyRules } from '../store/keys/key-store.ts';
import { ValidationError } from './errors.ts';

/** A key's rules as given to the API and the CLI: JWT public keys as PEM or JWK. */
export type KeyRulesInput = Partial<Omit<KeyRules, 'jwtKeys'>> & { jwtKeys?: JwtKeyInput[] };

/** What names are valid in a key's network and method lists. */
export interface RuleNames {
  /** Network names and aliases → the network's name (allowlists keep names: `devnet` is stored as `testnet`). */
  networks: ReadonlyMap<string, string>;
  methods: ReadonlySet<string>;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** The longest eth_getLogs range a key may be given: beyond, the network's own bound is the one that applies. */
const MAX_LOGS_RANGE = 1_000_000_000;
const MAX_AUDIENCES = 10;

/**
 * The rules given, checked and in the form they are kept (names of networks, lowercase addresses, JWKs); those not
 * given are left out. A list with wrong entries is refused naming every one of them, so a form is fixed in one go.
 */
export function checkKeyRules(input: KeyRulesInput, names: RuleNames): Partial<KeyRules> {
  const out: Partial<KeyRules> = {};
  const none = (field: string, bad: string[], what: string) => {
    if (bad.length) throw new ValidationError(field, `${what}: ${bad.map((b) => b.slice(0, 100)).join(', ')}`);
  };
  if (input.ipAllowlist !== undefined) {
    none('ipAllowlist', invalidAllowlistEntries(input.ipAllowlist), bad(input.ipAllowlist, 'not an IP address or CIDR', 'not IP addresses or CIDRs'));
    out.ipAllowlist = [...input.ipAllowlist];
  }
  if (input.originAllowlist !== undefined) {
    none('originAllowlist', input.originAllowlist.filter((o) => originOf(o) === undefined), 'not an origin (scheme://host[:port])');
    out.originAllowlist = input.originAllowlist.map((o) => originOf(o)!);
  }
  if (input.networkAllowlist !== undefined) {
    none('networkAllowlist', input.networkAllowlist.filter((n) => !names.networks.has(n)), 'unknown network');
    out.networkAllowlist = [...new Set(input.networkAllowlist.map((n) => names.networks.get(n)!))];
  }
  for (const field of ['methodAllowlist', 'methodDenylist'] as const) {
    const list = input[field];
    if (list === undefined) continue;
    none(field, list.filter((m) => !names.methods.has(m)), 'not an allowed method');
    out[field] = [...new Set(list)];
  }
  if (input.contractAllowlist !== undefined) {
    none('contractAllowlist', input.contractAllowlist.filter((a) => !ADDRESS.test(a)), 'not an address (0x and 40 hex digits)');
    out.contractAllowlist = [...new Set(input.contractAllowlist.map((a) => a.toLowerCase()))];
  }
  if (input.userAgentAllowlist !== undefined) {
    none('userAgentAllowlist', input.userAgentAllowlist.filter((u) => !u.trim() || u.length > 200), 'empty or longer than 200 characters');
    out.userAgentAllowlist = [...new Set(input.userAgentAllowlist.map((u) => u.trim()))];
  }
  if (input.logsMaxBlockRange !== undefined) {
    const n = input.logsMaxBlockRange;
    if (n !== null && (!Number.isSafeInteger(n) || n < 1 || n > MAX_LOGS_RANGE)) throw new ValidationError('logsMaxBlockRange', `a whole number of blocks from 1 to ${MAX_LOGS_RANGE}, or null for the network's bound`);
    out.logsMaxBlockRange = n;
  }
  if (input.jwtKeys !== undefined) out.jwtKeys = jwtKeys(input.jwtKeys);
  if (input.jwtAudiences !== undefined) {
    const a = input.jwtAudiences;
    if (a.length > MAX_AUDIENCES) throw new ValidationError('jwtAudiences', `at most ${MAX_AUDIENCES}`);
    none('jwtAudiences', a.filter((x) => !x.trim() || x.length > 200), 'empty or longer than 200 characters');
    out.jwtAudiences = [...new Set(a)];
  }
  if (input.expiresAt !== undefined && input.expiresAt !== null) {
    const t = Date.parse(input.expiresAt);
    if (Number.isNaN(t)) throw new ValidationError('expiresAt', 'must be an ISO 8601 date-time');
    out.expiresAt = new Date(t).toISOString();
  } else if (input.expiresAt === null) out.expiresAt = null;
  return out;
}

function jwtKeys(list: JwtKeyInput[]): JwtPublicKey[] {
  if (list.length > MAX_JWT_KEYS) throw new ValidationError('jwtKeys', `at most ${MAX_JWT_KEYS} public keys (room for a signer's old and new key side by side)`);
  const out: JwtPublicKey[] = [];
  for (const input of list) {
    const key = importJwtKey(input);
    if (typeof key === 'string') throw new ValidationError('jwtKeys', key);
    if (out.some((k) => k.id === key.id)) throw new ValidationError('jwtKeys', `two keys with the id ${key.id}`);
    out.push(key);
  }
  return out;
}

function originOf(o: string): string | undefined {
  try {
    const u = new URL(o);
    return u.origin !== 'null' && u.origin === o.replace(/\/$/, '') ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The message for a list's wrong entries: one, or several. */
const bad = (list: readonly string[], one: string, several: string) => (invalidAllowlistEntries(list).length > 1 ? several : one);
