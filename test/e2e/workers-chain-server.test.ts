/**
 * The primary's chain server with `--workers 2`: the loopback port through which the workers reach the embedded
 * chains. Any process of the machine reaches it; what it sends must be answered, never end the primary (which owns
 * the workers and the chains), and must not write to a chain without the secret the workers hold.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';

/** One request to the chain server, as any process of the machine could send it: path, headers and body as given. */
function raw(base: string, path: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: 'POST', agent: false, headers }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the primary\'s chain server (loopback, with --workers 2): bad requests are answered, writes need the secret', { timeout: 120_000 }, () => {
  let ng: NodegateProcess;
  /** anvil's development account 7: nothing else in these tests touches its balance. */
  const RICH = '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955';
  /** anvil's development account 8: makes the block after the writes. */
  const FROM = '0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f';

  before(async () => {
    ng = await startNodegate({ env: { NODEGATE_WORKERS: '2' } });
  });
  after(async () => {
    await ng?.stop();
    await killAll();
    if (ng) rmSync(ng.dataDir, { recursive: true, force: true });
  });

  test('a malformed path is 400, a keyless write 401, a text/plain body 415; the gateway keeps serving and the balance stands', async () => {
    const base = ng.logs().find((l) => l.chainServer)?.chainServer as string;
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/, 'the primary logs where its chain server listens');
    const before = await ng.call('eth_getBalance', [RICH, 'latest']);
    const mint = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setBalance', params: [RICH, '0x33b2e3c9fd0803ce8000000'] });
    const json = { 'content-type': 'application/json' };
    const statuses = {
      malformedPath: await raw(base, '/chain/%E0%A4%A', json, mint),
      noSecret: await raw(base, '/chain/mainnet', json, mint),
      wrongSecret: await raw(base, '/chain/mainnet', { ...json, authorization: 'Bearer not-the-secret' }, mint),
      textPlain: await raw(base, '/chain/mainnet', { 'content-type': 'text/plain' }, mint),
    };
    console.log(`workers: the chain server answered ${JSON.stringify(statuses)}`);
    assert.deepEqual(statuses, { malformedPath: 400, noSecret: 401, wrongSecret: 401, textPlain: 415 });
    assert.match(await ng.call('eth_blockNumber'), /^0x[0-9a-f]+$/, 'the public port still answers');
    // A block after the writes, so that the balance below is read afresh from the chain, not from an answer kept
    // for the block before them (anvil_setBalance changes the state without a block).
    const hash = await ng.call('eth_sendTransaction', [{ from: FROM, to: FROM, value: '0x1' }]);
    while (!(await ng.call('eth_getTransactionReceipt', [hash])));
    assert.equal(await ng.call('eth_getBalance', [RICH, 'latest']), before, 'no write reached the chain');
    assert.equal(ng.child.exitCode, null, 'the primary is running');
    assert.ok(!ng.logs().some((l) => /worker exited/.test(l.msg)), 'no worker died');
  });
});
