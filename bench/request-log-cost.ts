/**
 * What the request explorer adds to a request: its recording step (rpc/record.ts handing one call to
 * analytics/request-log.ts: the account's share of the minute, the params cut to explorer.maxParamsChars, one entry
 * appended to the buffer), for a single eth_call, with usage and metrics off so that only the explorer is measured.
 * The flushes (one transaction a second, off the request path) run between timed rounds, not in them.
 *   node --import tsx bench/request-log-cost.ts            timed: ns per call, median and fastest of 15 rounds
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --import tsx bench/request-log-cost.ts 10000
 *   (and 60000: the difference of the two instruction counts over 50,000 is the instructions per call, the
 *   recording and its share of the flush's serialisation; the store's write is not in it)
 */
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { RequestLog } from '../src/analytics/request-log.ts';
import { recorder } from '../src/rpc/record.ts';

const timed = process.argv[2] === undefined;
const iterations = Number(process.argv[2] ?? 10_000);

// A store that takes every batch and keeps nothing: the flush's cost is not the request's.
const store = {
  requests: { addRequests: async () => new Map<string, number>(), countRequests: async () => 0 },
  plans: { listPlans: async () => [] },
} as never;
const log = new RequestLog(store, { flushMs: 600_000, maxBuffered: 1_000_000, maxParamsChars: 512, maxMessageChars: 256, maxRecordsPerSecond: 1_000_000 }, pino({ level: 'silent' }));
const plan = { requestLogHours: 24, requestLogMax: 100_000_000 };
const key = { account: { id: 'account-1' }, key: { id: 'key-1' }, plan } as never;
const network = { name: 'mainnet', methods: new Map([['eth_call', { name: 'eth_call' }]]) } as never;
const items = [{ id: 1, notification: false, method: 'eth_call', params: [{ to: '0x' + '11'.repeat(20), data: '0x70a08231' + '00'.repeat(32) }, 'latest'] }];
const answers = [{ answer: { result: '0x' + '00'.repeat(32) }, status: 200 }];
const piece = `{"jsonrpc":"2.0","id":1,"result":"0x${'00'.repeat(32)}"}`;
const call = { cache: undefined, node: 'node-a' } as never;
const detail = { requestId: '8765ec5d-a318-462c-9918-000000000001', bodyBytes: 180, calls: [call], pieces: [piece] };
const units = () => 26;

const on = recorder({ requests: log });
const off = recorder({});
const loop = (record: typeof on, n: number) => { for (let i = 0; i < n; i++) record(0, network, key, items, answers, units, detail); };

if (!timed) {
  // In rounds of 10,000 with their flush, as the timed mode: the count is the recording and its share of the flush.
  for (let done = 0; done < iterations; done += 10_000) {
    loop(on, Math.min(10_000, iterations - done));
    await log.flush();
  }
} else {
  const ROUNDS = 15;
  const round = async (record: typeof on) => {
    const t = performance.now();
    loop(record, iterations);
    const ns = ((performance.now() - t) * 1e6) / iterations;
    await log.flush();
    return ns;
  };
  for (const [name, record] of [['explorer off', off], ['explorer on', on]] as const) {
    for (let i = 0; i < 3; i++) await round(record);
    const ns: number[] = [];
    for (let i = 0; i < ROUNDS; i++) ns.push(await round(record));
    ns.sort((a, b) => a - b);
    console.log(`${name.padEnd(13)} median ${ns[ROUNDS >> 1].toFixed(1)} ns/call, fastest ${ns[0].toFixed(1)} (${ROUNDS} rounds of ${iterations})`);
  }
}
await log.close();
