/**
 * The dashboard and the alerts against the real thing: Debian's Prometheus scrapes a real Nodegate (`nodegate start`,
 * three anvils behind mainnet, a webhook to a local receiver, a plan small enough to refuse a burst) every second.
 * Every metric name in deploy/grafana/nodegate.json and deploy/prometheus/alerts.yaml is on a real /metrics; every
 * query of the dashboard returns data; and with the alerting rules' own expressions (their `for` cut to 1 s, the
 * only change), killing one node fires NodegateUpstreamDown for it, and killing a second fires NodegateQuorumLost.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';
import { prometheusSkipReason, startPrometheus, type TestPrometheus } from '../helpers/prometheus.ts';

const skip = prometheusSkipReason('prometheus');
const dashboard = JSON.parse(readFileSync('deploy/grafana/nodegate.json', 'utf8')) as { panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }> };
const rules = parse(readFileSync('deploy/prometheus/alerts.yaml', 'utf8')) as { groups: Array<{ name: string; rules: Array<{ alert: string; expr: string; for?: string }> }> };
/** Each panel's queries, with the dashboard's variables as "All" and a rate window that holds several scrapes. */
const queries = dashboard.panels.filter((p) => p.type !== 'row').flatMap((p) => (p.targets ?? []).map((t) => ({
  panel: p.title, expr: t.expr.replaceAll('$instance', '.*').replaceAll('$network', '.*').replaceAll('$__rate_interval', '30s'),
})));
/** Metrics Prometheus makes itself, not Nodegate. */
const PROMETHEUS_OWN = new Set(['up']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The metric names an expression reads (selectors' names; label names and functions are not metric names). */
function metricNames(expr: string): string[] {
  const withoutLabels = expr.replace(/\{[^}]*\}/g, '{}').replace(/\b(by|without|on|ignoring|group_left|group_right) \([^)]*\)/g, '');
  return [...withoutLabels.matchAll(/\b(nodegate_[a-z0-9_]+|up)\b(?!\s*\()/g)].map((m) => m[1]);
}

describe('Prometheus scraping Nodegate: the dashboard\'s queries and the alerts', { skip, timeout: 240_000 }, () => {
  let nodes: TestAnvil[];
  let ng: NodegateProcess;
  let prom: TestPrometheus;
  let receiver: Server;
  let delivered = 0;
  let stopTraffic = false;
  let traffic: Promise<void>;
  let live: TestAnvil[];

  before(async () => {
    nodes = await Promise.all([startAnvil(['--no-mining']), startAnvil(['--no-mining']), startAnvil(['--no-mining'])]);
    live = [...nodes];
    receiver = createServer((req, res) => { req.resume(); req.on('end', () => { delivered++; res.end('ok'); }); });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    ng = await startNodegate({
      config: {
        networks: { mainnet: { chainId: 1, upstreams: nodes.map((n) => ({ url: n.url })) } },
        upstreams: { checkIntervalMs: 200 },
        webhooks: { allowPrivateTargets: true, pollMs: 100 },
        // A plan that the steady traffic below stays within and whose bucket (10 s of 400 units) a burst of 800
        // eth_blockNumber (10 units each) passes.
        plans: { tiny: { name: 'Tiny', cuPerSecond: 400, cuPerMonth: 1_000_000_000_000 } },
        accounts: { defaultPlan: 'tiny' },
      },
    });
    const made = await fetch(`${ng.url}/api/v1/webhooks`, {
      method: 'POST', headers: { authorization: `Bearer ${ng.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'mainnet', kind: 'block.mined', url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook` }),
    });
    assert.equal(made.status, 201, await made.text());
    const target = new URL(ng.url).host;
    prom = await startPrometheus([target], {
      groups: rules.groups.map((g) => ({ ...g, rules: g.rules.map((r) => (r.for ? { ...r, for: '1s' } : r)) })),
    });
    // Calls of every kind the dashboard shows: answers, callers' errors (an unknown method, bad params), cache hits
    // and misses, node calls; a block on every live node every second (the same block: same parent, same time).
    let time = 1735689700;
    traffic = (async () => {
      for (let i = 0; !stopTraffic; i++) {
        const calls = [
          ng.call('eth_blockNumber'), ng.call('eth_getBalance', ['0x000000000000000000000000000000000000beef', 'latest']),
          ng.call('eth_nope').catch(() => {}), ng.call('eth_getBalance', ['not an address']).catch(() => {}),
        ];
        if (i % 5 === 0) calls.push(Promise.all(live.map((n) => n.call('evm_mine', [{ timestamp: time }]))).then(() => { time++; }));
        await Promise.all(calls).catch(() => {});
        await sleep(200);
      }
    })();
    await sleep(4_000);
    // A burst past the plan's bucket, 20 calls at a time (under server.maxConnectionsPerIp): refusals.
    const burst: number[] = [];
    for (let wave = 0; wave < 40; wave++) {
      burst.push(...await Promise.all(Array.from({ length: 20 }, () => fetch(ng.rpcUrl(), {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      }).then((r) => r.status))));
    }
    assert.ok(burst.includes(429), 'the burst met the plan\'s limit');
    await sleep(4_000);
  });
  after(async () => {
    stopTraffic = true;
    await traffic;
    await prom?.stop();
    await killAll();
    for (const n of nodes ?? []) n.stop();
    receiver?.close();
  });

  test('every metric the dashboard and the alerts name is on a real /metrics', async () => {
    const text = await (await fetch(`${ng.url}/metrics`)).text();
    const families = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
    const scraped = new Set<string>(PROMETHEUS_OWN);
    for (const [name, type] of families) {
      scraped.add(name);
      if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) scraped.add(name + s);
    }
    const named = [...queries.map((q) => q.expr), ...rules.groups.flatMap((g) => g.rules.map((r) => r.expr))].flatMap(metricNames);
    assert.ok(named.length > 30);
    assert.deepEqual([...new Set(named)].filter((n) => !scraped.has(n)), []);
  });

  test('every query of the dashboard returns data', async () => {
    assert.ok(delivered > 0, 'webhook deliveries reached the receiver');
    const empty: string[] = [];
    for (const q of queries) if ((await prom.query(q.expr)).length === 0) empty.push(`${q.panel}: ${q.expr}`);
    console.log(`prometheus: ${queries.length - empty.length} of ${queries.length} dashboard queries returned data`);
    assert.deepEqual(empty, []);
  });

  test('a node killed fires NodegateUpstreamDown for it; a second fires NodegateQuorumLost', async () => {
    const firing = async (name: string, match: (labels: Record<string, string>) => boolean, ms: number) => {
      const until = Date.now() + ms;
      for (;;) {
        const alerts = await prom.alerts();
        if (alerts.some((a) => a.labels.alertname === name && a.state === 'firing' && match(a.labels))) return alerts;
        if (Date.now() > until) throw new Error(`${name} did not fire within ${ms} ms: ${JSON.stringify(alerts.map((a) => [a.labels.alertname, a.state, a.labels.upstream ?? a.labels.network]))}`);
        await sleep(250);
      }
    };
    const names = (alerts: Array<{ labels: Record<string, string>; state: string }>) => alerts.filter((a) => a.state === 'firing').map((a) => a.labels.alertname);
    assert.deepEqual(names(await prom.alerts()), [], 'nothing fires while every node is up');

    const [, second, third] = nodes;
    let t = Date.now();
    third.stop();
    live = live.filter((n) => n !== third);
    let alerts = await firing('NodegateUpstreamDown', (l) => l.upstream.includes(new URL(third.url).port), 30_000);
    console.log(`prometheus: NodegateUpstreamDown fired ${Date.now() - t} ms after its node was killed (scrape and evaluation every 1 s, for: 1 s)`);
    assert.ok(!names(alerts).includes('NodegateQuorumLost'), 'two of three nodes still make a quorum');

    t = Date.now();
    second.stop();
    live = live.filter((n) => n !== second);
    alerts = await firing('NodegateQuorumLost', (l) => l.network === 'mainnet', 30_000);
    console.log(`prometheus: NodegateQuorumLost fired ${Date.now() - t} ms after the second node was killed; firing: ${[...new Set(names(alerts))].join(', ')}`);
    assert.ok(!names(alerts).includes('NodegateNetworkDown'), 'one node still serves mainnet');
  });
});
