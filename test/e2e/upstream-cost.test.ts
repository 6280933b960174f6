/**
 * Upstream calls counted per client call, through the wire: a pool of two providers (test/helpers/provider.ts, in
 * front of one anvil), one with a price list. What /metrics says was sent, by upstream and purpose, is what each
 * provider saw; its units are its price list applied to those calls; the gateway's own checks are apart (background).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import parsePrometheus from 'parse-prometheus-text-format';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startProvider, type Provider } from '../helpers/provider.ts';

type Family = { name: string; metrics: Array<{ labels?: Record<string, string>; value?: string }> };

const BALANCES = 30;
const LOG_QUERIES = 2;

describe('upstream calls and units per client call, in /metrics', { timeout: 120_000 }, () => {
  let anvil: TestAnvil;
  let priced: Provider;
  let plain: Provider;
  let g: TestGateway;
  before(async () => {
    anvil = await startAnvil();
    await anvil.call('anvil_mine', ['0x28']);
    [priced, plain] = await Promise.all([startProvider(anvil.url), startProvider(anvil.url)]);
    g = await startTestGateway({
      networks: {
        pool: {
          chainId: 1,
          upstreams: [
            // archive: no holdings probes (they read balances too); a 10-block eth_getLogs range: queries are split.
            { url: priced.url, archive: true, getLogs: { maxBlockRange: 10 }, units: { eth_getBalance: 19, eth_getLogs: 75 }, defaultUnits: 10 },
            { url: plain.url, archive: true, getLogs: { maxBlockRange: 10 } },
          ],
        },
      },
      // Every call reaches a node, and no hedge is sent: the counts are the calls made.
      cache: { enabled: false },
      upstreams: { hedgeMaxMs: 0 },
    });
  });
  after(async () => {
    await g?.close();
    await Promise.all([priced?.close(), plain?.close()]);
    anvil?.stop();
  });

  test('N client calls: as many attempts as the providers saw, log pieces apart, units by the price list, checks as background', async () => {
    for (let i = 0; i < BALANCES; i++) {
      const r = await g.rpc({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [`0x${(i + 1).toString(16).padStart(40, '0')}`, 'latest'] }, { network: 'pool' });
      assert.equal(r.status, 200);
      assert.ok(r.body.result, JSON.stringify(r.body));
    }
    for (let i = 0; i < LOG_QUERIES; i++) {
      const r = await g.rpc({ jsonrpc: '2.0', id: i, method: 'eth_getLogs', params: [{ fromBlock: '0x1', toBlock: '0x1e' }] }, { network: 'pool' });
      assert.deepEqual(r.body.result, []);
    }
    const families = parsePrometheus(await (await fetch(`${g.url}/metrics`)).text()) as Family[];
    const of = (name: string, upstream: string | undefined, purpose: string) => (families.find((f) => f.name === name)?.metrics ?? [])
      .filter((m) => m.labels?.network === 'pool' && m.labels?.purpose === purpose && (upstream === undefined || m.labels?.upstream.includes(upstream)))
      .reduce((a, m) => a + Number(m.value), 0);
    const sent = (purpose: string, p?: Provider) => of('nodegate_upstream_sent_total', p && new URL(p.url).host, purpose);
    const seen = (method: string) => priced.calls(method) + plain.calls(method);

    // A client's calls: their first tries, and whatever was sent again for them (a retry after a failed call).
    const forClients = (p?: Provider) => sent('attempt', p) + sent('log_piece', p) + sent('retry', p) + sent('hedge', p);
    assert.equal(sent('attempt'), BALANCES, 'one first try per client eth_getBalance');
    assert.equal(sent('log_piece'), LOG_QUERIES * 3, 'blocks 1-30 in pieces of 10');
    for (const p of [priced, plain]) assert.equal(forClients(p), p.calls('eth_getBalance') + p.calls('eth_getLogs'), 'per upstream, what it saw');
    assert.equal(forClients(), seen('eth_getBalance') + seen('eth_getLogs'));
    assert.ok(sent('background') > 0, 'the checks of the upstreams, counted apart');

    const units = (purpose: string, p?: Provider) => of('nodegate_upstream_units_total', p && new URL(p.url).host, purpose);
    assert.equal(units('attempt', priced) + units('log_piece', priced) + units('retry', priced) + units('hedge', priced), 19 * priced.calls('eth_getBalance') + 75 * priced.calls('eth_getLogs'));
    assert.ok(units('background', priced) >= 10, 'its checks, at its default units');
    assert.equal(units('attempt', plain) + units('background', plain), 0, 'no price list: calls only');
    console.log(`upstream calls per client call: ${(forClients() / (BALANCES + LOG_QUERIES)).toFixed(2)} (${sent('retry') + sent('hedge')} sent again) (${sent('background')} background); `
      + `units at the priced provider: ${units('attempt', priced) + units('log_piece', priced)} for ${priced.calls('eth_getBalance') + priced.calls('eth_getLogs')} calls`);
  });
});
