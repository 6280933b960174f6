import type { Account } from '../store/accounts/account.ts';
import type { AccountStore } from '../store/accounts/account-store.ts';
import type { ApiKey, KeyContext } from '../store/keys/api-key.ts';
import type { KeyChanges, KeyStore } from '../store/keys/key-store.ts';
import type { Plan } from '../store/plans/plan.ts';
import type { PlanStore } from '../store/plans/plan-store.ts';
import { hashOfDigest } from './key-value.ts';
import { PackedKeys } from './packed-keys.ts';

/** Keys one read of the load asks for. */
const PAGE = 1000;
/** Between the fields of a packed key: a character no field of a plain key holds (one that does stays whole). */
const SEP = '\u001f';
const NONE = Object.freeze([]) as unknown as never[];

/**
 * A key with no rules, in one string (its fields between SEP, its account's place in the directory's list of accounts
 * second): kept as bytes in the directory's arena, and made an object again only when first used here (then kept,
 * prepared, in the resolver's cache).
 */
function pack(k: ApiKey, accountSlot: number): string | undefined {
  const rules = k.ipAllowlist.length + k.originAllowlist.length + k.networkAllowlist.length + k.methodAllowlist.length
    + k.methodDenylist.length + k.contractAllowlist.length + k.userAgentAllowlist.length + k.jwtKeys.length + k.jwtAudiences.length;
  if (rules > 0 || k.logsMaxBlockRange !== null || k.previousHash !== null || k.permissions.length === 0) return undefined;
  const fields = [k.id, String(accountSlot), k.accountId, k.name, k.type, k.permissions.join(','), k.prefix, k.expiresAt ?? '', k.createdBy ?? '', k.createdAt, k.lastUsedAt ?? ''];
  return fields.some((f) => f.includes(SEP)) ? undefined : fields.join(SEP);
}

/** A packed key whole, as the store gave it. */
export function unpack(packed: string, hash: string): ApiKey {
  const [id, , accountId, name, type, permissions, prefix, expiresAt, createdBy, createdAt, lastUsedAt] = packed.split(SEP);
  return {
    id, accountId, name, type: type as ApiKey['type'], permissions: permissions.split(',') as ApiKey['permissions'], prefix, hash,
    ipAllowlist: NONE, originAllowlist: NONE, networkAllowlist: NONE, methodAllowlist: NONE, methodDenylist: NONE,
    contractAllowlist: NONE, userAgentAllowlist: NONE, logsMaxBlockRange: null, jwtKeys: NONE, jwtAudiences: NONE,
    previousPrefix: null, previousUntil: null, previousHash: null, expiresAt: expiresAt || null, createdBy: createdBy || null,
    createdAt, lastUsedAt: lastUsedAt || null, revokedAt: null,
  };
}

/**
 * A key without rules as the directory holds it: its packed text and the hash of its value, with its account and plan.
 * What a request needs of it is read from the text (`packedRules`); the key is made whole (`unpack`) only when asked
 * for, so a key of a long tail held in the resolution cache costs one string, not an object and a dozen strings.
 */
export interface PackedContext { packed: string; hash: string; account: Account; plan: Plan }

/**
 * What a request needs of a packed key: its id, whether it is Dedicated, whether it may call (`rpc`), when it expires
 * and was last used (ms).
 */
export function packedRules(packed: string): { id: string; dedicated: boolean; rpc: boolean; expiresAtMs: number; lastUsedAtMs: number } {
  let at = packed.indexOf(SEP);
  const id = packed.slice(0, at);
  // Past the account's place, its id and the name: the type, then the permissions, the prefix, the expiry.
  for (let i = 0; i < 3; i++) at = packed.indexOf(SEP, at + 1);
  const typeEnd = packed.indexOf(SEP, at + 1);
  const dedicated = packed.slice(at + 1, typeEnd) === 'Dedicated';
  at = typeEnd;
  const end = packed.indexOf(SEP, at + 1);
  const rpc = packed.slice(at + 1, end).split(',').includes('rpc');
  at = packed.indexOf(SEP, end + 1);
  const expiresAt = packed.slice(at + 1, packed.indexOf(SEP, at + 1));
  const lastUsedAt = packed.slice(packed.lastIndexOf(SEP) + 1);
  return { id, dedicated, rpc, expiresAtMs: expiresAt ? Date.parse(expiresAt) : Infinity, lastUsedAtMs: lastUsedAt ? Date.parse(lastUsedAt) : -Infinity };
}

/** What the directory reads: keys in pages, every account and plan. */
export interface DirectorySource { keys: KeyStore; accounts: AccountStore; plans: PlanStore }

/**
 * Every key that is not revoked (up to `max`), with the accounts and plans, read from the store once at start in the
 * background, a page at a time: a key seen for the first time by this instance is then found in memory, not asked of
 * the store. With a million keys in use and a long tail of them, most first sights would otherwise each wait for a
 * read. The directory holds what the store said; it is kept true only by the change feed (auth/key-changes.ts): a
 * change reported for a key, an account or a plan takes it out, and from then on that key is looked up in the store
 * as any key not here. The resolver asks it only while the feed answers (key-resolver.ts).
 */
export class KeyDirectory {
  /** Keys without rules, packed (`pack`), by the digest of their value. */
  private readonly packed = new PackedKeys();
  /** Keys with rules (few), whole, by the hash of their value. */
  private readonly whole = new Map<string, ApiKey>();
  /** Keys reported changed (at most one entry per key): a change names a key by id, which a packed key holds inside (no second map of a million ids). */
  private readonly gone = new Set<string>();
  /** The accounts, each in a place of `accountList` (undefined once reported changed), found by id in `accountSlots`. */
  private readonly accountSlots = new Map<string, number>();
  private readonly accountList: Array<Account | undefined> = [];
  private readonly plans = new Map<string, Plan>();
  /** Accounts and plans reported changed while the load runs: read before the change, they are not kept (keys: `gone`). */
  private changed: { accounts: Set<string>; plans: Set<string> } | undefined;
  private stopped = false;

  constructor(private readonly source: DirectorySource, private readonly max: number) {}

  /** Reads the store: plans and accounts, then keys a page at a time (each page's read yields to callers). */
  async load(): Promise<void> {
    const changed = { accounts: new Set<string>(), plans: new Set<string>() };
    this.changed = changed;
    try {
      const [plans, accounts] = await Promise.all([this.source.plans.listPlans(), this.source.accounts.listAccounts()]);
      for (const p of plans) if (!changed.plans.has(p.id)) this.plans.set(p.id, p);
      for (const a of accounts) {
        if (changed.accounts.has(a.id)) continue;
        this.accountSlots.set(a.id, this.accountList.length);
        this.accountList.push(a);
      }
      let after = '';
      for (;;) {
        const room = this.max - this.size;
        if (room <= 0 || this.stopped) return;
        const page = await this.source.keys.pageKeys(after, Math.min(PAGE, room));
        for (const key of page) this.add(key);
        if (page.length < Math.min(PAGE, room)) break;
        after = page[page.length - 1].id;
      }
    } finally {
      this.changed = undefined;
    }
  }

  /**
   * The key whose value has this SHA-256 digest (`keyDigest`), with its account and plan, as the store last said:
   * packed when it has no rules (nearly all), else whole; undefined: ask the store.
   */
  get(digest: string): PackedContext | KeyContext | undefined {
    const packed = this.packed.get(digest);
    if (packed !== undefined) {
      const at = packed.indexOf(SEP);
      if (this.gone.size > 0 && this.gone.has(packed.slice(0, at))) return undefined;
      // The account's place, its digits read where they are (no string made), then the account at that place.
      let slot = 0;
      let i = at + 1;
      for (let ch = packed.charCodeAt(i); ch >= 48 && ch <= 57; ch = packed.charCodeAt(++i)) slot = slot * 10 + ch - 48;
      const account = i > at + 1 ? this.accountList[slot] : undefined;
      const plan = account && this.plans.get(account.planId);
      return plan && { packed, hash: hashOfDigest(digest), account: account!, plan };
    }
    const key = this.whole.size > 0 ? this.whole.get(hashOfDigest(digest)) : undefined;
    if (key === undefined || (this.gone.size > 0 && this.gone.has(key.id))) return undefined;
    const slot = this.accountSlots.get(key.accountId);
    const account = slot === undefined ? undefined : this.accountList[slot];
    const plan = account && this.plans.get(account.planId);
    return plan && { key, account: account!, plan };
  }

  /** The feed reported these changes: what they touch leaves (an account's or plan's keys, by their account or plan). */
  forget(c: KeyChanges): void {
    for (const { id } of c.keys) this.gone.add(id);
    for (const { id } of c.accounts) {
      const slot = this.accountSlots.get(id);
      if (slot !== undefined) this.accountList[slot] = undefined;
      this.changed?.accounts.add(id);
    }
    for (const { id } of c.plans) {
      this.plans.delete(id);
      this.changed?.plans.add(id);
    }
  }

  /** No further page is read (the instance is closing). */
  stop(): void {
    this.stopped = true;
  }

  get size(): number {
    return this.packed.size + this.whole.size;
  }

  private add(key: ApiKey): void {
    // A key of an account not read (made after the accounts were) is packed with no place (-1): it is looked up.
    const text = pack(key, this.accountSlots.get(key.accountId) ?? -1);
    if (text === undefined) this.whole.set(key.hash, key);
    // An arena at its bound (4 GiB) takes no more: such a key is looked up in the store, as one past `max`.
    else this.packed.add(Buffer.from(key.hash, 'hex').toString('latin1'), text);
  }
}
