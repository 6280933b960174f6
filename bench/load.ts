/**
 * One load run: autocannon against a target with a workload. Every answer is checked: an HTTP error, a
 * connection error or a JSON-RPC error counts as failed, and a run with failures says so in the table.
 */
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';
import type { Workload } from './workloads.ts';

export interface LoadResult {
  /** HTTP requests per second. */
  rps: number;
  /** Latency percentiles, ms (autocannon measures whole milliseconds). */
  p50: number;
  p99: number;
  requests: number;
  failed: number;
}

export interface LoadOptions {
  connections: number;
  /** Seconds; ignored when the workload has an `amount`. */
  duration: number;
  /** Headers of each request in turn, repeated (a fixed body only): each connection goes through them in order. */
  headerCycle?: Array<Record<string, string>>;
}

const HEADERS = { 'content-type': 'application/json' };

/** Runs the workload against `url` and returns its throughput and latency. */
export async function load(url: string, w: Workload, o: LoadOptions): Promise<LoadResult> {
  const body = w.body;
  const requests: autocannon.Request[] = typeof body === 'string'
    ? (o.headerCycle ?? [{}]).map((h) => ({ body, headers: { ...HEADERS, ...h } }))
    : [{ setupRequest: (req) => ({ ...req, body: body() }) }];
  // autocannon notices that a fixed amount is done only on its next one-second tick: time the answers ourselves.
  const start = performance.now();
  let last = start;
  const r = await autocannon({
    url, method: 'POST', headers: HEADERS, connections: o.connections,
    ...(w.amount ? { amount: w.amount } : { duration: o.duration }),
    requests,
    // JSON-RPC errors come with HTTP 200: look into the body (`"error":` appears in no result of these workloads).
    verifyBody: (b) => {
      last = performance.now();
      return !String(b).includes('"error":');
    },
  });
  const done = r.requests.total;
  const rps = w.amount ? (done * 1000) / (last - start) : r.requests.average;
  return { rps, p50: r.latency.p50, p99: r.latency.p99, requests: done, failed: r.errors + r.timeouts + r.non2xx + r.mismatches };
}
