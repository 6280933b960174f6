import { ACTIONS, can, type Action } from '../accounts/roles.ts';
import { grantable } from '../accounts/key-grants.ts';
import type { MemberRole } from '../store/team/member.ts';
import { PLAN_LIMITS, type PlanLimit } from '../config/plan-limits.ts';
import { errorFacts, type ErrorFact } from '../errors/catalogue.ts';
import { DEFAULT_PERMISSIONS, KEY_TYPES, PERMISSIONS, type KeyType, type Permission } from '../store/keys/api-key.ts';
import { WEBHOOK_KINDS } from '../webhooks/producer.ts';

/**
 * The domain facts the dashboard shows, served as `/dashboard/facts.json` (the old front end re-declared
 * permissions and plan fields, and drifted). Every list here is read from the module that defines it; the words
 * for people (what a type or a role means) sit beside them, once, for the dashboard and the docs alike.
 */

/** What each key type means to its holder (docs/decisions.md §6). */
const KEY_TYPE_HELP: Record<KeyType, string> = {
  Standard: 'Calls, webhooks and analytics (permissions rpc, webhooks, analytics). The usual key for an application.',
  Dedicated: "The same permissions as Standard; its calls go to the network's dedicated upstreams (nodes kept for dedicated traffic) when the operator configured some, else to the shared ones.",
  Restricted: 'Only the permissions you choose (at least one); the only type that can carry admin (managing the account\'s keys over the API).',
};

const PERMISSION_HELP: Record<Permission, string> = {
  rpc: 'JSON-RPC calls to the endpoints (HTTP and WebSocket)',
  webhooks: 'the webhooks API',
  analytics: 'the analytics API',
  admin: "managing this account's keys, team and settings over the API, as its owner (given only by an owner)",
  operator: "the operator's routes (all accounts and plans); only on a key of an operator account, given only by an operator in person",
};

/** Roles of an account's logins and what each may do: the actions of accounts/roles.ts, as `can(role, action)` says. */
const ROLE_HELP: Record<MemberRole, string> = {
  owner: 'Everything, including members and invitations.',
  developer: 'Keys, webhooks and alert settings; reads usage.',
  viewer: 'Reads keys, usage, webhooks and alerts; changes only their own password.',
};
const ROLES = (Object.keys(ROLE_HELP) as MemberRole[]).map((name) => ({
  name, help: ROLE_HELP[name], can: (Object.keys(ACTIONS) as Action[]).filter((a) => can(name, a)),
  // What the role may put on a key in person (accounts/key-grants.ts); an operator's owner may also give `operator`.
  grants: [...grantable({ role: name, person: true, accountRole: 'member' })],
}));

/** One option field of a webhook kind: how the form asks for it and checks it before sending. */
interface OptionField {
  name: string;
  label: string;
  /** One value, or a list (one per line in the form). */
  list: boolean;
  required: boolean;
  /** A JavaScript regular expression source each value must match. */
  pattern: string;
  /** The human sentence shown when a value does not match. */
  problem: string;
  help: string;
}

const ADDRESS = { pattern: '^0x[0-9a-fA-F]{40}$', problem: 'must be an address: 0x followed by 40 hex digits' };
const HASH32 = { pattern: '^0x[0-9a-fA-F]{64}$', problem: 'must be 0x followed by 64 hex digits' };

/**
 * What each kind sends and the options it takes (webhooks/producer.ts reads the same option names). The kinds listed
 * are WEBHOOK_KINDS: an entry here for a kind the producer does not (yet) have is never shown.
 */
const KIND_FACTS: Record<string, { help: string; needsNetwork: boolean; options: OptionField[] }> = {
  'block.mined': { help: 'Every new block of the network (and removed: true for blocks dropped by a reorganisation).', needsNetwork: true, options: [] },
  logs: {
    help: 'Logs of each new block that match an address and topics (empty: every log).', needsNetwork: true,
    options: [
      { name: 'address', label: 'Contract address (optional)', list: false, required: false, ...ADDRESS, help: 'Only logs emitted by this contract.' },
      { name: 'topics', label: 'Topics (optional, one per line)', list: true, required: false, ...HASH32, help: 'topic0, topic1, … in order; each 0x + 64 hex digits.' },
    ],
  },
  'address.activity': {
    help: 'Transactions from or to the watched addresses, and token transfers touching them.', needsNetwork: true,
    options: [{ name: 'addresses', label: 'Addresses (one per line)', list: true, required: true, ...ADDRESS, help: '1 to 1,000 addresses.' }],
  },
  'transaction.mined': {
    help: 'The watched transactions, when they are mined.', needsNetwork: true,
    options: [{ name: 'hashes', label: 'Transaction hashes (one per line)', list: true, required: true, ...HASH32, help: '1 to 1,000 transaction hashes.' }],
  },
  'usage.threshold': { help: "Your account's alerts (quota used, error rate) as they fire; set them on the Alerts page.", needsNetwork: false, options: [] },
};

/** The error codes seen in usage, each with what it means: the catalogue's rows of that code, together (-32005 is every limit). */
function errorCodes(rows: ErrorFact[] = errorFacts()) {
  const byCode = new Map<number, { code: number; http: number[]; names: string[]; meaning: string[] }>();
  for (const e of rows) {
    const c = byCode.get(e.code) ?? { code: e.code, http: [], names: [], meaning: [] };
    if (!c.http.includes(e.http)) c.http.push(e.http);
    if (!c.names.includes(e.name)) c.names.push(e.name);
    if (!c.meaning.includes(e.meaning)) c.meaning.push(e.meaning);
    byCode.set(e.code, c);
  }
  return [...byCode.values()].map((c) => ({ code: c.code, http: c.http, name: c.names.join(', '), meaning: c.meaning.join('; ') }));
}

export interface DashboardFacts {
  permissions: { name: Permission; help: string; default: boolean }[];
  keyTypes: { name: KeyType; help: string }[];
  roles: { name: string; help: string; can: string[]; grants: Permission[] }[];
  webhookKinds: { name: string; help: string; needsNetwork: boolean; options: OptionField[] }[];
  planLimits: readonly PlanLimit[];
  errorCodes: { code: number; http: number[]; name: string; meaning: string }[];
}

/** Made once at start-up: nothing here changes while the gateway runs. */
export function dashboardFacts(): DashboardFacts {
  return {
    permissions: PERMISSIONS.map((p) => ({ name: p, help: PERMISSION_HELP[p], default: DEFAULT_PERMISSIONS.includes(p) })),
    keyTypes: KEY_TYPES.map((t) => ({ name: t, help: KEY_TYPE_HELP[t] })),
    roles: ROLES.map((r) => ({ ...r, can: [...r.can], grants: [...r.grants] })),
    webhookKinds: WEBHOOK_KINDS.map((k) => ({ name: k, ...(KIND_FACTS[k] ?? { help: '', needsNetwork: true, options: [] }) })),
    planLimits: PLAN_LIMITS,
    errorCodes: errorCodes(),
  };
}
