import { CONTRACT_BACKOFF } from '../../src/api/login-backoff.contract.ts';
import { eventMessage, PrimaryServer } from '../../src/workers/ipc.ts';
import { PrimaryState, type Broadcast } from '../../src/workers/primary-state.ts';
import type { PrimaryEvents, PrimaryProtocol } from '../../src/workers/protocol.ts';

/**
 * A primary's shared state in a process of its own, answering its parent as its one worker over node's IPC
 * channel (forked by workers/primary-process.test.ts): the real pipe and serialisation a cluster worker has.
 */
const send = (m: unknown) => void process.send?.(m);
const server = new PrimaryServer<PrimaryProtocol>();
const broadcast: Broadcast = (topic, data) => send(eventMessage<PrimaryEvents, typeof topic>(topic, data));
const state = new PrimaryState(server, broadcast, CONTRACT_BACKOFF, () => {});
process.on('message', (m: unknown) => server.handle(m, 1, send));
process.on('disconnect', () => void state.close().then(() => process.exit(0)));
send({ ng: 'event', topic: 'listening', data: null });
