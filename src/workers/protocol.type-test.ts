import { PrimaryServer } from '../shared-state/ipc.ts';
import type { SharedStateClient } from '../shared-state/protocol.ts';
import type { PrimaryProtocol, ToPrimary, WorkerStart } from './protocol.ts';

/**
 * The workers' whole protocol holds on both sides, its shared-state part included (that part's own cases are in
 * shared-state/protocol.type-test.ts): `npm run typecheck` fails if a line marked `@ts-expect-error` is accepted.
 * Never run (nothing calls these functions); compiled only.
 */

export async function workerSide(primary: ToPrimary): Promise<void> {
  const start: WorkerStart = await primary.call('primary', 'start', []);
  void start;
  // The shared state's variants take the worker's client of the whole protocol.
  const shared: SharedStateClient = primary;
  void shared;
  // @ts-expect-error a lifecycle method the protocol does not have
  void primary.call('primary', 'begin', []);
  // @ts-expect-error the shared state's view has no lifecycle calls
  void shared.call('primary', 'start', []);
  // @ts-expect-error an event's data is its topic's
  primary.on('reset', (network: number) => network);
}

export function primarySide(server: PrimaryServer<PrimaryProtocol>, start: WorkerStart): void {
  server.offer('primary', { start: () => start, ready: () => {}, stoppedAccepting: () => {} });
  // @ts-expect-error a lifecycle method missing
  server.offer('primary', { start: () => start, ready: () => {} });
  // @ts-expect-error an answer of another type than the protocol's
  server.offer('primary', { start: () => 'now', ready: () => {}, stoppedAccepting: () => {} });
}
