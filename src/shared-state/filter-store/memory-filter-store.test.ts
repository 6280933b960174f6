import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { filterStoreContract } from './filter-store.contract.ts';
import { MemoryFilterStore } from './memory-filter-store.ts';

filterStoreContract('memory', async (now) => new MemoryFilterStore(now));

describe('memory filter store, specifically', () => {
  it('counts the live filters of this instance', async () => {
    let t = 0;
    const s = new MemoryFilterStore(() => t);
    const f = (id: string, ttl: number) => ({ id, keyId: 'k', accountId: 'a', network: 'mainnet', kind: 'blocks' as const, cursor: { number: 1, hash: '0x1' }, origin: 1, recent: [], expiresAt: t + ttl });
    await s.add(f('0x1', 10), 5);
    await s.add(f('0x2', 100), 5);
    assert.equal(s.size, 2);
    t = 10;
    await s.get('0x1');
    assert.equal(s.size, 1, 'an expired filter met is dropped');
    await s.close();
  });
});
