import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryLeases } from '../leases/memory-leases.ts';
import { headsHubContract } from './heads-hub.contract.ts';
import { MemoryHeads } from './memory-heads.ts';

/** The table the workers' primary keeps; each process of the contract a view of it as a holder of its own. */
const table = new MemoryHeads(new MemoryLeases());
let holders = 0;
headsHubContract('memory (the primary\'s table)', async () => table.hub(`holder ${++holders}`));

describe('memory heads, specifically', () => {
  test('a head that moves is told with who moved it and which way; one that does not is not told', () => {
    const heads = new MemoryHeads(new MemoryLeases());
    const told: unknown[] = [];
    heads.listen((key, n, mode, from) => told.push([key, n, mode, from]));
    heads.publish('k', 5, 'up', '1');
    heads.publish('k', 4, 'up', '2');
    heads.publish('k', 3, 'down', '2');
    assert.deepEqual(told, [['k', 5, 'up', '1'], ['k', 3, 'down', '2']]);
    assert.deepEqual(heads.read(['k', 'other']), [3, null]);
  });

  test('a forgotten head starts again from what is published next', () => {
    const heads = new MemoryHeads(new MemoryLeases());
    heads.publish('k', 100, 'up', '1');
    heads.forget('k');
    heads.publish('k', 2, 'up', '1');
    assert.deepEqual(heads.read(['k']), [2]);
  });
});
