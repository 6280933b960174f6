/**
 * `nodegate start --workers 2` stopped with SIGTERM while keep-alive clients keep it busy: every call whose bytes
 * went out on a connection the gateway had accepted, before the signal or after it (the gateway hears of it later
 * than the clients go on sending), gets its whole answer (no reset, no 5xx, no JSON-RPC error), and the gateway
 * exits 0. A call made once the port is closed is refused at connect, before the client has sent anything.
 *
 * "On the wire" is undici's own event: the request written to a connection the gateway accepted
 * (`undici:client:sendHeaders`, published as the request's bytes are written); the test marks the moment it
 * signals in the same thread, so "before" is exact. Rounds alternate between a signal to the primary alone (`kill
 * PID`, `docker stop`) and to its process group (a terminal's Ctrl-C, a service manager's stop). The suite runs 3
 * rounds; `ROUNDS=20 node --import tsx --test test/e2e/workers-sigterm.test.ts` (or `npm run soak --
 * workers-sigterm`) runs 20.
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { HDNodeWallet } from 'ethers';
import { Client } from 'undici';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';
import { sized } from '../helpers/soak.ts';

const ROUNDS = sized(3, 20, 'ROUNDS');
/** Concurrent clients, each on one keep-alive connection (undici's Client), each with one call in flight at a time. */
const CLIENTS = 8;
/** Calls answered before the signal: every client is busy by then. */
const WARM = 200;
const TXS_PER_CLIENT = 200;
const MNEMONIC = 'test test test test test test test test test test test junk';
const SINK = '0x000000000000000000000000000000000000beef';

/** A sender's transfers, nonce 0 up, signed before the load: signing is the test's CPU, not the gateway's. */
async function transfers(index: number, count: number): Promise<string[]> {
  const w = HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${index}`);
  const out: string[] = [];
  for (let nonce = 0; nonce < count; nonce++) {
    out.push(await w.signTransaction({ type: 2, chainId: 1, nonce, gasLimit: 21_000n, maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, to: SINK, value: 1n }));
  }
  return out;
}

/** The calls whose bytes undici wrote, by the `x-call` header each carries: true for those before the signal. */
const sent = new Map<string, boolean>();
let signalled = false;
/** Calls on the wire and not yet answered; `busy` resolves once half the clients have one (armed after the warm-up). */
let onWire = 0;
let busy: (() => void) | undefined;
const onSend = (m: unknown) => {
  const id = /\r\nx-call: (\S+)\r\n/i.exec((m as { headers: string }).headers)?.[1];
  if (!id) return;
  sent.set(id, !signalled);
  if (++onWire >= CLIENTS / 2 && busy) {
    busy();
    busy = undefined;
  }
};

interface Outcome { id: string; ok: boolean; what: string }
interface Round {
  /** Calls written before the signal, and those of them not yet answered when it was sent. */
  sentBefore: number;
  inFlight: number;
  /** Calls written after it (on connections opened before it): the gateway had not yet stopped reading them. */
  sentAfter: number;
  /** Written calls (before or after the signal) that got no whole answer. */
  failed: Outcome[];
  /** Calls never written: refused at connect once the port was closed. */
  refused: Record<string, number>;
  code: number | null;
  stopMs: number;
}

/** One client: calls one after another on its keep-alive connection until one fails after the signal. */
async function load(ng: NodegateProcess, c: number, txs: string[], outcomes: Outcome[], answered: () => void, done: Set<string>): Promise<void> {
  const conn = new Client(ng.url, { keepAliveTimeout: 60_000 });
  const path = new URL(ng.rpcUrl('mainnet')).pathname;
  let tx = 0;
  try {
    for (let n = 0; ; n++) {
      const [method, params]: [string, unknown[]] = n % 3 === 0 && tx < txs.length ? ['eth_sendRawTransaction', [txs[tx++]]]
        : n % 3 === 1 ? ['eth_call', [{ to: SINK, data: '0x' }, 'latest']] : ['eth_blockNumber', []];
      const id = `${c}.${n}`;
      const o = await conn.request({
        path, method: 'POST', headers: { 'content-type': 'application/json', 'x-call': id },
        body: JSON.stringify({ jsonrpc: '2.0', id: n, method, params }),
      }).then(async (res) => {
        const json = JSON.parse(await res.body.text()) as { error?: { message: string } };
        const what = res.statusCode !== 200 ? `HTTP ${res.statusCode}` : json.error ? `${method}: ${json.error.message}` : 'answered';
        return { id, ok: what === 'answered', what };
      }, (err: Error & { code?: string }) => ({ id, ok: false, what: err.code ?? err.message }));
      done.add(id);
      if (sent.has(id)) onWire--;
      outcomes.push(o);
      if (o.ok) answered();
      else if (signalled) return;
    }
  } finally {
    await conn.destroy().catch(() => {});
  }
}

async function round(i: number, txs: string[][]): Promise<Round> {
  const group = i % 2 === 1;
  const ng = await startNodegate({ args: ['--workers', '2'], config: { limits: { enabled: false } } });
  try {
    sent.clear();
    signalled = false;
    onWire = 0;
    const outcomes: Outcome[] = [];
    const done = new Set<string>();
    let count = 0;
    let warm!: () => void;
    const warmed = new Promise<void>((r) => { warm = r; });
    const clients = txs.map((t, c) => load(ng, c, t, outcomes, () => { if (++count === WARM) warm(); }, done));
    await Promise.race([warmed, Promise.all(clients)]);
    // The signal goes out while calls are on the wire: at the moment undici writes one with half the clients busy.
    await Promise.race([new Promise<void>((r) => { busy = r; }), Promise.all(clients)]);
    signalled = true;
    const stopped = ng.stop('SIGTERM', { group });
    const before = [...sent].filter(([, b]) => b).map(([id]) => id);
    const inFlight = before.filter((id) => !done.has(id)).length;
    const { code, ms } = await stopped;
    await Promise.all(clients);
    const refused: Record<string, number> = {};
    for (const o of outcomes) if (!sent.has(o.id)) refused[o.what] = (refused[o.what] ?? 0) + 1;
    const failed = outcomes.filter((o) => sent.has(o.id) && !o.ok);
    return { sentBefore: before.length, inFlight, sentAfter: sent.size - before.length, failed, refused, code, stopMs: ms };
  } finally {
    rmSync(ng.dataDir, { recursive: true, force: true });
  }
}

describe(`--workers 2 stopped with SIGTERM under load (${ROUNDS} rounds)`, { timeout: 120_000 + ROUNDS * 60_000 }, () => {
  let txs: string[][];
  before(async () => {
    txs = await Promise.all(Array.from({ length: CLIENTS }, (_, c) => transfers(c + 1, TXS_PER_CLIENT)));
    subscribe('undici:client:sendHeaders', onSend);
  });
  after(async () => {
    unsubscribe('undici:client:sendHeaders', onSend);
    await killAll();
  });

  test('every call sent on an open connection is answered in full, the others refused at connect, and the gateway exits 0', async () => {
    let clean = 0;
    const failures: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round(i, txs);
      const lost = r.failed.length;
      if (lost === 0 && r.code === 0) clean++;
      failures.push(...r.failed.map((o) => `round ${i + 1}: call ${o.id}${sent.get(o.id) ? '' : ' (sent after the signal)'}: ${o.what}`));
      console.log(`workers-sigterm: round ${i + 1} (signal to ${i % 2 === 1 ? 'the process group' : 'the primary'}): ${r.sentBefore} calls sent before SIGTERM (${r.inFlight} in flight at it), ${r.sentAfter} sent after it on open connections; ${lost} of them failed (${r.failed.map((o) => o.what).join(', ') || 'none'}); refused at connect: ${JSON.stringify(r.refused)}; exit ${r.code} in ${r.stopMs} ms`);
      assert.ok(r.inFlight > 0, 'calls were in flight at the signal');
      assert.ok(Object.keys(r.refused).every((what) => what === 'ECONNREFUSED'), `calls not sent were refused at connect: ${JSON.stringify(r.refused)}`);
    }
    console.log(`workers-sigterm: ${clean} of ${ROUNDS} rounds with 0 failed calls and exit 0`);
    assert.deepEqual(failures, []);
    assert.equal(clean, ROUNDS);
  });
});
