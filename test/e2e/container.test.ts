// Runs alone (scripts/run-tests.mjs): it builds an image (a TypeScript build and copies of node_modules, a core's work
// for a minute or more), which would slow the files beside it past the bounds they assert.
/**
 * The image as an operator runs it: deploy/Containerfile built with podman on a base made from this machine's own
 * files (deploy/local-base.sh; no image registry), run with a read-only root and a data volume, its port published on
 * 127.0.0.1. The quick start's key is read from the container's log and answers `eth_blockNumber`; the process is
 * not root and cannot write its root filesystem; the image's HEALTHCHECK passes; SIGTERM under load (`podman kill
 * --signal SIGTERM`, as `podman stop` and the kubelet send it) fails no call and exits 0, and the chain and the key
 * are there after a restart on the same volume.
 *
 * Without podman the file says it is skipped; under CI it runs (`.ci/run` installs podman). The first build on a
 * machine makes the base and the dependency layers (~10 minutes); later runs reuse them (about a minute).
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, before, describe, test } from 'node:test';
import { HDNodeWallet } from 'ethers';
import { Client } from 'undici';
import { freePort } from '../helpers/process.ts';
import { TEST_IMAGE, buildTestImage, podman, podmanSkipReason, run } from '../helpers/podman.ts';

const skip = podmanSkipReason('container');
const NAME = `nodegate-test-${process.pid}`;
const VOLUME = `${NAME}-data`;
const CLIENTS = 6;
const TXS_PER_CLIENT = 60;
const WARM = 150;
const SINK = '0x000000000000000000000000000000000000beef';

/** One sender's transfers, nonce 0 up, signed before the load. */
async function transfers(index: number): Promise<string[]> {
  const w = HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, `m/44'/60'/0'/0/${index}`);
  const out: string[] = [];
  for (let nonce = 0; nonce < TXS_PER_CLIENT; nonce++) {
    out.push(await w.signTransaction({ type: 2, chainId: 1, nonce, gasLimit: 21_000n, maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, to: SINK, value: 1n }));
  }
  return out;
}

/** Waits until the container's log has its `starts`-th banner (the first with the key); returns the log. */
async function banner(starts: number): Promise<string> {
  const until = Date.now() + 90_000;
  for (;;) {
    const r = await run(['logs', NAME]);
    const text = r.stdout + r.stderr;
    if (text.split('Nodegate listening on').length - 1 >= starts && (starts > 1 || /Try it:\n[^\n]*curl/.test(text))) return text;
    const state = await run(['inspect', '--format', '{{.State.Status}}', NAME]);
    if (state.stdout.trim() === 'exited') throw new Error(`the container exited before its banner:\n${text.slice(-3000)}`);
    if (Date.now() > until) throw new Error(`no banner within 90 s:\n${text.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = await res.json() as { result?: unknown; error?: { message: string } };
  if (res.status !== 200 || body.error) throw new Error(`${method}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body.result;
}

describe('the container image', { skip, timeout: 45 * 60_000 }, () => {
  let port: number;
  let url: string;
  let key: string;

  before(async () => {
    const { base, baseMs, buildMs } = await buildTestImage();
    console.log(`container: base ${base} (${baseMs} ms, made once per machine), image ${TEST_IMAGE} built in ${buildMs} ms`);
    port = await freePort();
    await podman(['volume', 'create', VOLUME]);
    await podman(['run', '--detach', '--name', NAME, '--read-only', '--publish', `127.0.0.1:${port}:8545`, '--volume', `${VOLUME}:/data`, TEST_IMAGE]);
    const log = await banner(1);
    key = /^\s+(ngk_\S+)\s*$/m.exec(log)![1];
    url = `http://127.0.0.1:${port}/v1/mainnet/${key}`;
  });
  after(async () => {
    await run(['rm', '--force', '--time', '0', NAME]);
    await run(['volume', 'rm', '--force', VOLUME]);
  });

  test('the quick start\'s key, read from the log, answers eth_blockNumber over the published port', async () => {
    assert.match(await rpc(url, 'eth_blockNumber'), /^0x[0-9a-f]+$/);
    assert.equal(await rpc(url, 'eth_chainId'), '0x1');
  });

  test('it runs as a user that is not root, on a read-only root filesystem, writing only to /data', async () => {
    const image = JSON.parse(await podman(['image', 'inspect', TEST_IMAGE]))[0] as { Config: { User: string; Volumes: Record<string, unknown> }; Healthcheck?: { Test: string[] } };
    const config = image.Config;
    assert.equal(config.User, '10001:10001');
    assert.ok('/data' in config.Volumes, 'a volume at /data');
    assert.ok(image.Healthcheck?.Test.join(' ').includes('/healthz'), 'the image keeps its HEALTHCHECK (built with --format docker)');
    assert.equal(await podman(['exec', NAME, 'id', '-u']), '10001');
    assert.equal(await podman(['inspect', '--format', '{{.HostConfig.ReadonlyRootfs}}', NAME]), 'true');
    const write = await run(['exec', NAME, 'touch', '/app/probe']);
    assert.notEqual(write.code, 0);
    assert.match(write.stderr, /Read-only file system/);
    assert.equal((await run(['exec', NAME, 'touch', '/data/probe'])).code, 0);
    // The process that serves (PID 1) is the node of the ENTRYPOINT, not a shell: signals reach it.
    assert.match(await podman(['exec', NAME, 'cat', '/proc/1/cmdline']), /^node\0--max-semi-space-size=64\0\/app\/bin\/nodegate\.mjs\0start/);
  });

  test('the image\'s HEALTHCHECK passes', async () => {
    const r = await run(['healthcheck', 'run', NAME]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });

  test('SIGTERM under load fails no call, exits 0, and the chain and the key are there after a restart', { timeout: 5 * 60_000 }, async () => {
    const txs = await Promise.all(Array.from({ length: CLIENTS }, (_, c) => transfers(c + 1)));
    // A call is "sent" once undici has written it to a connection the container accepted.
    const sent = new Map<string, boolean>();
    let signalled = false;
    const onSend = (m: unknown) => {
      const id = /\r\nx-call: (\S+)\r\n/i.exec((m as { headers: string }).headers)?.[1];
      if (id) sent.set(id, !signalled);
    };
    subscribe('undici:client:sendHeaders', onSend);
    const outcomes: Array<{ id: string; ok: boolean; what: string }> = [];
    let answered = 0;
    let warm!: () => void;
    const warmed = new Promise<void>((r) => { warm = r; });
    let mined = 0;
    const path = new URL(url).pathname;
    const client = async (c: number) => {
      const conn = new Client(`http://127.0.0.1:${port}`, { keepAliveTimeout: 60_000 });
      let tx = 0;
      try {
        for (let n = 0; ; n++) {
          const [method, params]: [string, unknown[]] = n % 3 === 0 && tx < txs[c].length ? ['eth_sendRawTransaction', [txs[c][tx++]]]
            : n % 3 === 1 ? ['eth_call', [{ to: SINK, data: '0x' }, 'latest']] : ['eth_blockNumber', []];
          const id = `${c}.${n}`;
          const o = await conn.request({ path, method: 'POST', headers: { 'content-type': 'application/json', 'x-call': id }, body: JSON.stringify({ jsonrpc: '2.0', id: n, method, params }) })
            .then(async (res) => {
              const json = JSON.parse(await res.body.text()) as { error?: { message: string } };
              const what = res.statusCode !== 200 ? `HTTP ${res.statusCode}` : json.error ? `${method}: ${json.error.message}` : 'answered';
              return { id, ok: what === 'answered', what };
            }, (err: Error & { code?: string }) => ({ id, ok: false, what: err.code ?? err.message }));
          outcomes.push(o);
          if (o.ok && method === 'eth_sendRawTransaction') mined++;
          if (o.ok && ++answered === WARM) warm();
          if (!o.ok && signalled) return;
        }
      } finally {
        await conn.destroy().catch(() => {});
      }
    };
    try {
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
      await Promise.race([warmed, Promise.all(clients)]);
      signalled = true;
      const t = Date.now();
      await podman(['kill', '--signal', 'SIGTERM', NAME]);
      const code = Number(await podman(['wait', NAME], 60_000));
      const stopMs = Date.now() - t;
      await Promise.all(clients);
      const failed = outcomes.filter((o) => sent.has(o.id) && !o.ok);
      const refused: Record<string, number> = {};
      for (const o of outcomes) if (!sent.has(o.id)) refused[o.what] = (refused[o.what] ?? 0) + 1;
      const before = [...sent.values()].filter(Boolean).length;
      console.log(`container: SIGTERM after ${before} calls sent (${sent.size - before} more on open connections after it); ${failed.length} failed (${failed.map((o) => o.what).join(', ') || 'none'}); not sent, refused at connect: ${JSON.stringify(refused)}; exit ${code} in ${stopMs} ms; ${mined} transfers acknowledged`);
      assert.deepEqual(failed, []);
      assert.equal(code, 0);
      assert.ok(Object.keys(refused).every((what) => what === 'ECONNREFUSED'), `calls not sent: ${JSON.stringify(refused)}`);
    } finally {
      unsubscribe('undici:client:sendHeaders', onSend);
    }

    // The same volume, the same container: the key (only its hash is stored) and every acknowledged transfer are there.
    await podman(['start', NAME]);
    await banner(2);
    const block = Number(await rpc(url, 'eth_blockNumber'));
    const nonces = await Promise.all(Array.from({ length: CLIENTS }, (_, c) => rpc(url, 'eth_getTransactionCount', [HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, `m/44'/60'/0'/0/${c + 1}`).address, 'latest'])));
    const total = nonces.reduce((a: number, n: string) => a + Number(n), 0);
    console.log(`container: after the restart, block ${block}, ${total} transfers on chain (${mined} acknowledged)`);
    assert.ok(total >= mined, `every acknowledged transfer is on chain: ${total} < ${mined}`);
  });
});
