import { after } from 'node:test';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import { filterStoreContract } from './filter-store.contract.ts';
import { RemoteFilterStore } from './remote-filter-store.ts';

/** The workers' filters keep the filter store's contract, through a primary of their own on the test's clock. */
const primaries: Array<ReturnType<typeof primaryWithWorkers>> = [];
after(() => Promise.all(primaries.map((p) => p.close())));

filterStoreContract('worker (the primary, over IPC)', async (now) => {
  const p = primaryWithWorkers({ now });
  primaries.push(p);
  return new RemoteFilterStore(p.worker());
});
