/**
 * A hosted node's key in its URL (Infura `/v3/KEY`, the docs' own example; Alchemy `/v2/KEY`; QuickNode
 * `/KEY/`; a query value; a password) is shown nowhere: not in the banner, the logs, `/metrics`, `/readyz` or
 * `nodegate config check`. Nodegate runs as its own process, its upstreams reached through those very paths.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startFakeNode, type FakeNode } from '../helpers/fake-node.ts';
import { cliCommand, startNodegate, type NodegateProcess } from '../helpers/process.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const INFURA = '0123456789abcdef0123456789abcdef';
const ALCHEMY = 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE';
const QUICKNODE = '4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b';
const QUERY = 'querysecret9876';
const PASSWORD = 'pw-secret-4242';
const SECRETS = [INFURA, ALCHEMY, QUICKNODE, QUERY, PASSWORD];

/** Each secret that `text` holds. */
const leaked = (text: string) => SECRETS.filter((s) => text.includes(s));

describe('upstream URLs with a key in the path, the query or the userinfo', { timeout: 120_000 }, () => {
  let anvil: TestAnvil;
  let node: FakeNode;
  let dead: TcpServer;
  let ng: NodegateProcess;
  let config: Record<string, unknown>;
  before(async () => {
    anvil = await startAnvil();
    node = await startFakeNode(anvil.url);
    // A node that never answers, so that its URL reaches the warnings of an unreachable upstream too.
    dead = createTcpServer((s) => s.destroy());
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadPort = (dead.address() as { port: number }).port;
    config = {
      log: { level: 'debug', requests: true },
      upstreams: { checkIntervalMs: 100 },
      networks: {
        keyed: {
          chainId: 1,
          upstreams: [
            { url: `${node.origin}/v3/${INFURA}` },
            { url: `${node.origin}/v2/${ALCHEMY}`, role: 'fallback' },
            { url: `http://operator:${PASSWORD}@127.0.0.1:${deadPort}/${QUICKNODE}/?apikey=${QUERY}`, role: 'fallback', timeoutMs: 500 },
          ],
        },
      },
    };
    ng = await startNodegate({ config });
  });
  after(async () => {
    await ng?.stop();
    await node?.close();
    dead?.close();
    anvil?.stop();
  });

  test('the key appears in none of: banner and logs, /metrics, /readyz, config check', async () => {
    // Calls through the gateway, answered through the keyed paths.
    for (let i = 0; i < 5; i++) assert.equal(await ng.call('eth_chainId', [], 'keyed'), '0x1');
    await ng.call('eth_blockNumber', [], 'keyed');
    assert.ok(node.paths.has(`/v3/${INFURA}`), `the node was reached on its keyed path (${[...node.paths].join(', ')})`);
    const metrics = await (await fetch(`${ng.url}/metrics`)).text();
    const readyz = await (await fetch(`${ng.url}/readyz`)).text();
    // The dead node's breaker opens: its URL is in a warning line.
    await eventually(() => ng.logs().some((l) => l.upstream?.includes(`${deadPort(config)}`) && l.level >= 40), 10_000, 'a warning about the dead upstream');
    const check = await configCheck(ng.dataDir);
    assert.equal(check.code, 0, check.stderr);
    await ng.stop();
    const output = ng.output();

    const upstreamLabels = [...new Set([...metrics.matchAll(/upstream="([^"]*)"/g)].map((m) => m[1]))];
    const logged = [...new Set(ng.logs().flatMap((l) => (typeof l.upstream === 'string' ? [l.upstream] : [])))];
    console.log(`redaction: banner lines:\n${output.split('\n').filter((l) => /primary|fallback/.test(l)).join('\n')}`);
    console.log(`redaction: /metrics upstream labels ${JSON.stringify(upstreamLabels)}; log upstreams ${JSON.stringify(logged)}; ${ng.logs().length} log lines`);
    console.log(`redaction: secrets found: output ${leaked(output).length}, /metrics ${leaked(metrics).length}, /readyz ${leaked(readyz).length}, config check ${leaked(check.stdout + check.stderr).length} (of ${SECRETS.length})`);
    assert.ok(upstreamLabels.some((l) => l.endsWith('/v3/***')), 'the metrics still name the upstream, with its key hidden');
    assert.ok(output.includes('/v2/***'), 'the banner still names the upstream, with its key hidden');
    assert.deepEqual(leaked(output), [], 'banner, stdout and log lines');
    assert.deepEqual(leaked(metrics), [], '/metrics');
    assert.deepEqual(leaked(readyz), [], '/readyz');
    assert.deepEqual(leaked(check.stdout + check.stderr), [], 'config check');
  });
});

/** The dead upstream's port, from the configuration. */
function deadPort(config: Record<string, any>): number {
  return Number(new URL(config.networks.keyed.upstreams[2].url).port);
}

/** `nodegate config check` on the configuration file the gateway was started with. */
function configCheck(dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, NODEGATE_CONFIG: join(dataDir, 'test-config.json'), NODEGATE_DATA_DIR: dataDir };
  const child = spawn(process.execPath, [...cliCommand(), 'config', 'check'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
