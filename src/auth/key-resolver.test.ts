import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newKeyMaterial } from './key-value.ts';
import type { ChangeListener, ChangeSignals } from '../store/keys/change-signals.ts';
import { KeyResolver, LAST_USE_GRAIN_MS, type ResolvedKey } from './key-resolver.ts';
import { sqliteStores } from '../store/open-store.ts';
import { freePlan, newAccount, newKey } from '../store/store.contract.ts';
import { AccountsService } from '../accounts/service.ts';
import { Metrics } from '../analytics/metrics.ts';
import type { Networks } from '../networks/networks.ts';

/** The values of the keys made here, by hash (the store keeps hashes only). */
const valueOf = new Map<string, string>();

/** A resolver over a real SQLite store, its clock in the test's hands, a key of the free plan. */
async function setUp() {
  const store = sqliteStores(':memory:');
  await store.plans.createPlan(freePlan);
  const account = await store.accounts.createAccount(newAccount());
  const material = newKeyMaterial('k');
  valueOf.set(material.key.hash, material.value);
  const key = await store.keys.insertKey(newKey(account.id, material.key));
  let now = 1_000_000;
  const keys = new KeyResolver(store, 1000, 0, undefined, {}, () => now);
  const resolve = async () => (await keys.resolve(material.value)) as ResolvedKey;
  return { store, account, key, keys, resolve, later: (ms: number) => { now += ms; } };
}

test('a key the store says the same of, asked again after its ttl, is the same resolution: its last use aside', async () => {
  const { store, key, keys, resolve, later } = await setUp();
  const first = await resolve();
  // Its last use written meanwhile (as flushLastUsed does every 10 s) is no change to what the hot path reads.
  await store.keys.touchKeys(new Map([[key.id, new Date().toISOString()]]));
  later(1500);
  const again = await resolve();
  assert.equal(again, first, 'the objects the hot path holds stay the same while the key does');
  await keys.close();
  await store.close();
});

test('a change made elsewhere (another instance, the CLI) is seen after the ttl, as a new resolution', async () => {
  const { store, account, key, keys, resolve, later } = await setUp();
  const first = await resolve();
  assert.equal(first.plan.cuPerSecond, freePlan.cuPerSecond);
  // Not through this resolver (no invalidate): only the ttl bounds how long the old plan is served.
  await store.plans.updatePlan(freePlan.id, { cuPerSecond: 7 });
  await store.keys.updateKey(key.id, { methodAllowlist: ['eth_chainId'] });
  assert.equal((await resolve()).plan.cuPerSecond, freePlan.cuPerSecond, 'within the ttl: as resolved');
  later(1500);
  const changed = await resolve();
  assert.notEqual(changed, first);
  assert.equal(changed.plan.cuPerSecond, 7);
  assert.deepEqual([...changed.methods!], ['eth_chainId']);
  // Suspended: refused after the ttl.
  await store.accounts.updateAccount(account.id, { status: 'suspended' });
  later(1500);
  await assert.rejects(async () => resolve(), /suspended/);
  await keys.close();
  await store.close();
});

test('a key rotated with a 60 s overlap: both values work for 60 s, then only the new one, on every instance', async () => {
  const { store, key, keys: unused } = await setUp();
  await unused.close();
  let now = 1_000_000;
  const clock = () => now;
  const keys = new KeyResolver(store, 1000, 0, undefined, {}, clock);
  const service = new AccountsService(store, { networks: new Map(), methods: new Set(), defaultPlan: 'free' }, () => keys.invalidate(), clock);
  // Another instance: it hears of no change, only its ttl (1 s) and the clock bound what it serves.
  const other = new KeyResolver(store, 1000, 0, undefined, {}, clock);
  const old = (await store.keys.getKey(key.id))!;
  const oldValue = valueOf.get(old.hash)!;
  assert.equal((await other.resolve(oldValue)).key.id, key.id);
  const { value } = await service.rotateKey(key.id, 60_000);
  const at = async (r: KeyResolver, v: string) => { try { await r.resolve(v); return 'works'; } catch (e) { return (e as Error).message; } };
  for (const r of [keys, other]) {
    assert.equal(await at(r, value), 'works');
    assert.equal(await at(r, oldValue), 'works');
  }
  now += 59_500;
  assert.equal(await at(other, oldValue), 'works', 'within the overlap');
  now += 499;
  assert.equal(await at(other, oldValue), 'works', 'within the overlap, served from the cache');
  now += 1;
  // The cached resolution refuses it by the clock; one looked up afresh is no key's any more.
  assert.equal(await at(other, oldValue), 'invalid API key: the key was rotated: this value no longer works');
  assert.equal(await at(keys, oldValue), 'invalid API key');
  for (const r of [keys, other]) assert.equal(await at(r, value), 'works');
  // Its hash leaves the store with the next sweep; the old value is then unknown.
  assert.equal(await store.keys.forgetPreviousValues({ endedBy: new Date(now).toISOString() }), 1);
  now += 1000;
  assert.equal(await at(other, oldValue), 'invalid API key');
  await other.close();
  await keys.close();
  await store.close();
});

/** The store as a resolver sees it, counting the lookups of keys (the read each cache miss costs). */
function counted(store: ReturnType<typeof sqliteStores>) {
  const seen = { lookups: 0 };
  const keys = {
    ...store.keys,
    findKeysByHash: (hashes: readonly string[], now: string) => { seen.lookups += hashes.length; return store.keys.findKeysByHash(hashes, now); },
  };
  return { store: { keys }, seen };
}

test('following the store\'s changes, a key in use is not looked up again each ttl; revoked elsewhere, it stops at the next look', async () => {
  const { store, key, keys: here } = await setUp();
  await here.close();
  let now = Date.now();
  const clock = () => now;
  const value = [...valueOf].find(([hash]) => hash === key.hash)![1];
  // Another instance, following the changes; this one revokes through its API.
  const { store: watched, seen } = counted(store);
  const other = new KeyResolver(watched, 1000, 0, { followChanges: true }, {}, clock);
  const service = new AccountsService(store, { networks: new Map(), methods: new Set(), defaultPlan: 'free' }, () => {}, clock);
  await other.followChanges();
  assert.equal((await other.resolve(value)).key.id, key.id);
  for (let i = 0; i < 10; i++) {
    now += 400;
    await other.followChanges();
    assert.equal((other.resolve(value) as ResolvedKey).key.id, key.id, 'served from memory, decided at once');
  }
  assert.equal(seen.lookups, 1, 'one lookup in 4 s of use');
  await service.revokeKey(key.id);
  await other.followChanges();
  await assert.rejects(async () => other.resolve(value), /revoked/);
  // When the changes are not asked for within the ttl, the key is looked up again, as without the feed.
  now += 1500;
  await assert.rejects(async () => other.resolve(value), /revoked/);
  assert.equal(seen.lookups, 3);
  await other.close();
  await store.close();
});

test("the store's word of a revocation refuses the key at once, before any look at the changes and with no lookup", async () => {
  const { store, key, keys: here } = await setUp();
  await here.close();
  const now = Date.now();
  const value = [...valueOf].find(([hash]) => hash === key.hash)![1];
  const listeners: ChangeListener[] = [];
  const signals: ChangeSignals = { listen: (l) => { listeners.push(l); return () => {}; }, stats: { heard: 0, joined: 0 }, close: async () => {} };
  const { store: watched, seen } = counted(store);
  let looks = 0;
  const keys = { ...watched.keys, signals, changesSince: (since: string) => { looks++; return store.keys.changesSince(since); } };
  const other = new KeyResolver({ keys }, 1000, 0, { followChanges: true }, {}, () => now);
  await other.followChanges();
  assert.equal((await other.resolve(value)).key.id, key.id);
  // Revoked by another writer: this instance has not looked since, and is told only the store's word.
  await store.keys.revokeKey(key.id);
  assert.equal((other.resolve(value) as ResolvedKey).key.id, key.id, 'still served before the word');
  const [lookups, looked] = [seen.lookups, looks];
  for (const l of listeners) l(key.id);
  await new Promise((r) => setImmediate(r));
  await assert.rejects(async () => other.resolve(value), /revoked/);
  assert.deepEqual([seen.lookups, looks], [lookups, looked], 'refused on the word alone');
  await other.close();
  await store.close();
});

test('a key asked for by many requests at once, and many keys at once, are looked up in one read', async () => {
  const { store, key, keys: here } = await setUp();
  await here.close();
  const value = [...valueOf].find(([hash]) => hash === key.hash)![1];
  let reads = 0;
  const watched = { keys: { ...store.keys, findKeysByHash: (hs: readonly string[], n: string) => { reads++; return store.keys.findKeysByHash(hs, n); } } };
  const keys = new KeyResolver(watched, 1000, 0, {}, {}, () => 1_000_000);
  const unknown = Array.from({ length: 20 }, () => newKeyMaterial('x').value);
  const answers = await Promise.allSettled([...Array.from({ length: 32 }, () => keys.resolve(value)), ...unknown.map((v) => keys.resolve(v))]);
  assert.equal(answers.filter((a) => a.status === 'fulfilled' && a.value.key.id === key.id).length, 32);
  assert.equal(answers.filter((a) => a.status === 'rejected' && /invalid API key/.test(String(a.reason))).length, 20);
  assert.equal(reads, 1);
  await keys.close();
  await store.close();
});

test('a flood of values no key has does not evict the keys in use', async () => {
  const { store, key, keys: here } = await setUp();
  await here.close();
  const value = [...valueOf].find(([hash]) => hash === key.hash)![1];
  const { store: watched, seen } = counted(store);
  const keys = new KeyResolver(watched, 60_000, 0, { entries: 10, unknownEntries: 100 }, {}, () => 1_000_000);
  await keys.resolve(value);
  for (let i = 0; i < 1000; i++) await assert.rejects(async () => keys.resolve(newKeyMaterial('x').value), /invalid API key/);
  assert.equal((keys.resolve(value) as ResolvedKey).key.id, key.id, 'still in memory');
  assert.equal(seen.lookups, 1001);
  await keys.close();
  await store.close();
});

test('/metrics counts the keys looked up in the store and the resolutions held: a key held is not looked up again', async () => {
  const { store, keys, resolve, later } = await setUp();
  const metrics = new Metrics({ list: [], subscriptions: { stats: { sockets: 0, notifications: {}, dropped: {}, messagesRefused: 0, subscriptionsRefused: {} }, counts: () => ({}) } } as unknown as Networks,
    () => 0, undefined, undefined, { storeDown: () => false, limits: () => 'memory', keys: { held: () => keys.stats.held, readAhead: () => keys.stats.readAhead, directoryReads: () => keys.stats.directoryReads, lookups: () => keys.stats.lookups } });
  const scrape = async () => {
    const text = await metrics.registry.metrics();
    return [Number(/^nodegate_key_lookups_total (\d+)$/m.exec(text)?.[1]), Number(/^nodegate_key_cache_entries (\d+)$/m.exec(text)?.[1])];
  };
  assert.deepEqual(await scrape(), [0, 0]);
  const key = await resolve();
  keys.used(key);
  await resolve();
  assert.deepEqual(await scrape(), [1, 1], 'one lookup for two requests; one resolution held');
  later(1500); // past its ttl (no change feed here): looked up again, still one held
  await resolve();
  assert.deepEqual(await scrape(), [2, 1]);
  await keys.close();
  await store.close();
});

test('keys read ahead at start resolve without a lookup; revoked elsewhere, one stops at the next look; a change made here is asked of the store', async () => {
  const { store, account, key, keys: here } = await setUp();
  await here.close();
  let now = Date.now();
  const value = [...valueOf].find(([hash]) => hash === key.hash)![1];
  const others = await Promise.all([0, 1].map(async () => {
    const m = newKeyMaterial('k');
    return { key: await store.keys.insertKey(newKey(account.id, m.key)), value: m.value };
  }));
  const { store: watched, seen } = counted(store);
  const keys = new KeyResolver({ ...store, ...watched }, 1000, 0, { followChanges: true, directoryKeys: 10 }, {}, () => now);
  await keys.directoryRead;
  await keys.followChanges();
  for (const [v, id] of [[value, key.id], [others[0].value, others[0].key.id], [others[1].value, others[1].key.id]]) {
    assert.equal((keys.resolve(v) as ResolvedKey).key.id, id, 'decided at once, from memory');
  }
  assert.equal(seen.lookups, 0);
  assert.equal(keys.stats.directoryReads, 3, 'each taken from the keys read ahead once');
  keys.resolve(value);
  assert.equal(keys.stats.directoryReads, 3, 'then held in the resolution cache');
  // A key made after the read is looked up.
  const later = newKeyMaterial('k');
  await store.keys.insertKey(newKey(account.id, later.key));
  assert.ok((await keys.resolve(later.value)).key);
  assert.equal(seen.lookups, 1);
  // Revoked by another writer: refused once the feed has looked, and not served from the directory again.
  await store.keys.revokeKey(others[0].key.id);
  now += 400;
  await keys.followChanges();
  await assert.rejects(async () => keys.resolve(others[0].value), /revoked/);
  // Revoked here (this instance's own change): the next request asks the store, before the feed has looked.
  await store.keys.revokeKey(others[1].key.id);
  keys.invalidate();
  await assert.rejects(async () => keys.resolve(others[1].value), /revoked/);
  await keys.close();
  await store.close();
});

test('a key read ahead resolves to what the store says of it: its type, permissions, expiry and last use, and the key whole when read', async () => {
  const { store, account, keys: here } = await setUp();
  await here.close();
  let now = Date.now();
  const made = async (over: Parameters<typeof newKey>[1]) => {
    const m = newKeyMaterial('k');
    const key = await store.keys.insertKey(newKey(account.id, { ...m.key, ...over }));
    return { key, value: m.value };
  };
  const dedicated = await made({ type: 'Dedicated', expiresAt: new Date(now + 60_000).toISOString() });
  const noRpc = await made({ type: 'Restricted', permissions: ['analytics'] });
  await store.keys.touchKeys(new Map([[dedicated.key.id, new Date(now - 1000).toISOString()]]));
  const { store: watched, seen } = counted(store);
  const keys = new KeyResolver({ ...store, ...watched }, 1000, 0, { followChanges: true, directoryKeys: 10 }, {}, () => now);
  await keys.directoryRead;
  await keys.followChanges();
  const d = keys.resolve(dedicated.value) as ResolvedKey;
  assert.equal(keys.stats.directoryReads, 1, 'from the keys read ahead');
  assert.equal(seen.lookups, 0);
  assert.deepEqual([d.keyId, d.accountId, d.dedicated, d.rpc, d.expiresAtMs, d.listedAtMs], [dedicated.key.id, account.id, true, true, now + 60_000, now - 1000]);
  assert.deepEqual(d.key, (await store.keys.getKey(dedicated.key.id)), 'the key whole, as the store has it');
  const r = keys.resolve(noRpc.value) as ResolvedKey;
  assert.deepEqual([r.dedicated, r.rpc, r.expiresAtMs, r.listedAtMs, r.key.permissions], [false, false, Infinity, -Infinity, ['analytics']]);
  // Past its expiry, the key read ahead is refused as any expired key.
  now += 61_000;
  await keys.followChanges();
  await assert.rejects(async () => keys.resolve(dedicated.value), /expired/);
  await keys.close();
  await store.close();
});

test('last uses are written once per key per round, the latest of each, at most once a minute, and kept for the next round when the write fails', async () => {
  const { store, key, keys, resolve, later } = await setUp();
  const r = await resolve();
  keys.used(r);
  later(500);
  keys.used(r);
  await keys.flushLastUsed();
  assert.equal((await store.keys.getKey(key.id))!.lastUsedAt, new Date(1_000_500).toISOString(), 'the later of the two uses');
  // Within a minute of the use listed last, a use is not written again.
  later(LAST_USE_GRAIN_MS - 1000);
  keys.used(r);
  await keys.flushLastUsed();
  assert.equal((await store.keys.getKey(key.id))!.lastUsedAt, new Date(1_000_500).toISOString(), 'within the minute');
  later(500);
  keys.used(r);
  const failing = Object.create(store.keys, { touchKeys: { value: async () => { throw new Error('store down'); } } });
  (keys as unknown as { store: { keys: unknown } }).store = { keys: failing };
  await assert.rejects(keys.flushLastUsed());
  (keys as unknown as { store: { keys: unknown } }).store = store;
  await keys.flushLastUsed();
  assert.equal((await store.keys.getKey(key.id))!.lastUsedAt, new Date(1_000_000 + LAST_USE_GRAIN_MS).toISOString(), 'the use whose write failed, written at the next round');
  // Nothing of the failed batch was written: the next use, a second later, is listed again.
  later(1000);
  keys.used(r);
  await keys.flushLastUsed();
  assert.equal((await store.keys.getKey(key.id))!.lastUsedAt, new Date(1_001_000 + LAST_USE_GRAIN_MS).toISOString(), 'listed again after the failure');
  await keys.close();
  await store.close();
});

test('the directory keeps nothing read before a change it was told of while reading', async () => {
  const { store, key, keys: here } = await setUp();
  await here.close();
  const value = [...valueOf].find(([hash]) => hash === key.hash)![1];
  const other = await store.accounts.createAccount(newAccount());
  const m = newKeyMaterial('k');
  await store.keys.insertKey(newKey(other.id, m.key));
  let keys: KeyResolver | undefined;
  const { store: watched, seen } = counted(store);
  // While the accounts, then the keys are read, the feed reports the other account suspended and the key revoked
  // (changes that landed after those reads).
  const accounts = { ...store.accounts, listAccounts: async () => {
    const all = await store.accounts.listAccounts();
    await store.accounts.updateAccount(other.id, { status: 'suspended' });
    await keys!.followChanges();
    return all;
  } };
  const racing = { ...watched.keys, pageKeys: async (after: string, limit: number) => {
    const page = await store.keys.pageKeys(after, limit);
    await store.keys.revokeKey(key.id);
    await keys!.followChanges();
    return page;
  } };
  keys = new KeyResolver({ ...store, accounts, keys: racing }, 1000, 0, { followChanges: true, directoryKeys: 10 }, {}, () => Date.now());
  await keys.directoryRead;
  await keys.followChanges();
  await assert.rejects(async () => keys.resolve(value), /revoked/);
  await assert.rejects(async () => keys.resolve(m.value), /suspended/);
  assert.equal(seen.lookups, 2, 'both asked of the store');
  await keys.close();
  await store.close();
});
