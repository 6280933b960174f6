import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leasesContract } from './leases.contract.ts';
import { MemoryLeases } from './memory-leases.ts';

/** The table the workers' primary keeps: each "process" of the contract a holder of its own. */
const table = new MemoryLeases();
let holders = 0;
leasesContract('memory', async () => {
  const holder = `holder ${++holders}`;
  return { take: (name, ttlMs) => table.take(name, ttlMs, holder), close: async () => {} };
});

test('one process alone holds every lease it asks for, decided at once', () => {
  const own = new MemoryLeases();
  assert.equal(own.take('checks:x', 1000), true);
  assert.equal(own.take('checks:x', 1000), true);
});
