/**
 * The CPU one sampled request costs tracing, in this process: its request span with five events, one upstream
 * attempt's span, and their OTLP/HTTP (JSON) export to a sink that drops them. Times the sampling ratio, what
 * tracing adds to an average request.
 *   node --import tsx bench/tracing-span-cost.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openTracer } from '../src/tracing/exporter.ts';
import { onTracing } from '../src/tracing/tracing.ts';

const ROUNDS = 20;
/** Below the batch processor's queue (2,048 spans), so that none is dropped unexported. */
const PER_ROUND = 1000;

const sink = createServer((req, res) => void req.resume().on('end', () => res.end('{}')));
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const config = { enabled: true, otlpUrl: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`, sampleRatio: 1, serviceName: 'bench', followCallerSampled: false, sendTraceparent: false };
const { tracer, flush, shutdown } = openTracer(config);
const tracing = onTracing(tracer, config, shutdown);
const c0 = process.cpuUsage();
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < PER_ROUND; i++) {
    const t = tracing.request('POST /v1/{network}', undefined, 'mainnet')!;
    t.step('admit');
    t.step('frame');
    t.step('limit');
    t.step('stage head', { 'rpc.method': 'eth_blockNumber' });
    t.step('stage forward', { 'rpc.method': 'eth_blockNumber' });
    tracing.attempt(t, 'http://127.0.0.1:8545/', 'eth_blockNumber').end('answer');
    t.end(200);
  }
  await flush();
}
const used = process.cpuUsage(c0);
console.log(`${((used.user + used.system) / (ROUNDS * PER_ROUND)).toFixed(1)} µs CPU per sampled request (2 spans, 5 events, export included)`);
await tracing.shutdown();
sink.close();
