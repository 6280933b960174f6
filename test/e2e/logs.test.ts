import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger, startGateway } from '../../src/app.ts';
import { validateConfig } from '../../src/config/load.ts';

test('logs never contain an API key, valid or not, whatever the request does', async () => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  const dataDir = mkdtempSync(join(tmpdir(), 'nodegate-logs-'));
  const config = validateConfig({
    dataDir,
    server: { port: 0 },
    log: { level: 'trace', requests: true },
    networks: { mainnet: { chainId: 1 }, deadnet: { chainId: 6, upstream: 'http://127.0.0.1:9' } },
  });
  const gw = await startGateway(config, { log: createLogger(config, sink) });
  const key = gw.secrets.demoKey!;
  const unknown = 'ngk_' + 'Z'.repeat(43);
  try {
    const post = (path: string, body: string) =>
      fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.text());
    await post(`/v1/mainnet/${key}`, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
    await post(`/mainnet/${key}?x=1`, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    await post(`/v1/mainnet/${unknown}`, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    await post(`/v1/nowhere/${key}`, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    await post(`/v1/mainnet/${key}`, '{broken');
    await post(`/v1/deadnet/${key}`, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    await fetch(`${gw.url}/v1/mainnet/${key}`);
  } finally {
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const log = lines.join('');
  // The request lines were written (so the check below looked at something)...
  assert.ok(lines.filter((l) => l.includes('"msg":"request"')).length >= 6, 'a line per request');
  assert.match(log, /\/v1\/mainnet\/\[redacted\]/);
  // ...and neither key, nor any part of one long enough to matter, is in them.
  for (const k of [key, unknown]) {
    assert.ok(!log.includes(k), 'the key is not in the logs');
    assert.ok(!log.includes(k.slice(4, 20)), 'no fragment of the key is in the logs');
  }
});
