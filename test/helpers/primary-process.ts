import { CONTRACT_BACKOFF } from '../../src/shared-state/login-backoff/login-backoff.contract.ts';
import { eventMessage, PrimaryServer } from '../../src/shared-state/ipc.ts';
import { PrimaryState } from '../../src/shared-state/primary-state.ts';
import type { PrimaryEvents, PrimaryProtocol } from '../../src/workers/protocol.ts';

/**
 * A primary's shared state in a process of its own, answering its parent as its one worker over node's IPC
 * channel (forked by workers/primary-process.test.ts): the real pipe and serialisation a cluster worker has.
 */
const send = (m: unknown) => void process.send?.(m);
const server = new PrimaryServer<PrimaryProtocol>();
const broadcast = <T extends keyof PrimaryEvents & string>(topic: T, data: PrimaryEvents[T]) => send(eventMessage<PrimaryEvents, typeof topic>(topic, data));
const state = new PrimaryState(server, broadcast, CONTRACT_BACKOFF, () => {});
process.on('message', (m: unknown) => server.handle(m, 1, send));
process.on('disconnect', () => void state.close().then(() => process.exit(0)));
send({ ng: 'event', topic: 'listening', data: null });
