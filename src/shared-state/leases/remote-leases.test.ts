import { after } from 'node:test';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import { leasesContract } from './leases.contract.ts';
import { RemoteLeases } from './remote-leases.ts';

/** Workers of one primary, each call of the contract through JSON as over the cluster's channel: each a holder. */
const primary = primaryWithWorkers();
after(() => primary.close());

leasesContract('worker (the primary, over IPC)', async () => new RemoteLeases(primary.worker()));
