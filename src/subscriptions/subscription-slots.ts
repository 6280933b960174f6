/** What the plan allows an account's subscriptions (per key, per account), and the plan's name for messages. */
export interface SubscriptionCaps { name: string; subscriptionsPerKey: number; subscriptionsPerAccount: number }

/** One live subscription as the caps see it: its key, its account, and the socket (session) that holds it. */
export interface Slot<S> { id: string; keyId: string; accountId: string; session: S }

/**
 * The subscriptions each key and account hold on this instance (each socket lives on one), oldest first: the plan's
 * caps are checked against them at eth_subscribe, and again when the plan changes under live subscriptions, when the
 * newest past the new caps are the ones to end. An account's entry exists only while it holds one, so this holds no
 * more than the live subscriptions.
 */
export class SubscriptionSlots<S> {
  private readonly perKey = new Map<string, number>();
  /** By account, in the order they were made (a Map keeps insertion order): the newest last. */
  private readonly byAccount = new Map<string, Map<string, Slot<S>>>();

  /** Which cap a new subscription of `keyId` would pass, if any. */
  refusal(keyId: string, accountId: string, caps: SubscriptionCaps): 'key' | 'account' | undefined {
    if ((this.perKey.get(keyId) ?? 0) >= caps.subscriptionsPerKey) return 'key';
    if ((this.byAccount.get(accountId)?.size ?? 0) >= caps.subscriptionsPerAccount) return 'account';
    return undefined;
  }

  hold(slot: Slot<S>): void {
    this.perKey.set(slot.keyId, (this.perKey.get(slot.keyId) ?? 0) + 1);
    let held = this.byAccount.get(slot.accountId);
    if (!held) this.byAccount.set(slot.accountId, (held = new Map()));
    held.set(slot.id, slot);
  }

  release(slot: Slot<S>): void {
    const held = this.byAccount.get(slot.accountId);
    if (!held?.delete(slot.id)) return;
    if (held.size === 0) this.byAccount.delete(slot.accountId);
    const n = (this.perKey.get(slot.keyId) ?? 0) - 1;
    if (n > 0) this.perKey.set(slot.keyId, n);
    else this.perKey.delete(slot.keyId);
  }

  /**
   * The newest of the account's subscriptions past `caps` and the cap it passes (its key's first, then the
   * account's), or undefined when they all fit.
   */
  newestPast(accountId: string, caps: SubscriptionCaps): { slot: Slot<S>; scope: 'key' | 'account' } | undefined {
    const held = this.byAccount.get(accountId);
    if (!held) return undefined;
    const newestFirst = [...held.values()].reverse();
    const over = newestFirst.find((s) => (this.perKey.get(s.keyId) ?? 0) > caps.subscriptionsPerKey);
    if (over) return { slot: over, scope: 'key' };
    return held.size > caps.subscriptionsPerAccount ? { slot: newestFirst[0], scope: 'account' } : undefined;
  }
}
