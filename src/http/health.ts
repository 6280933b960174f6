import type { FastifyInstance } from 'fastify';
import type { OpenedRateLimiter } from '../shared-state/rate-limiter/rate-limiter.ts';
import { bounded } from '../store/bounded.ts';
import type { StoreOutage } from '../store/outage.ts';
import type { Networks } from '../networks/networks.ts';

/**
 * `/healthz`: the process is alive (liveness only). `/readyz`: every network has an upstream that answers
 * (docs/decisions.md §11); 503 with the failing parts otherwise, so a load balancer stops sending traffic. A store that
 * does not answer within 1 s makes it `degraded`, still 200: every instance shares the store, so draining them for it
 * would turn a lost store into an outage, while keys seen recently are served from memory. Each network's
 * upstreams are listed as its chain module sees them (state, chain id, head, lag, breaker). It also says where
 * the per-second limits are kept (`memory`, `redis`, or `degraded`).
 */
export function registerHealthRoutes(app: FastifyInstance, deps: { networks: Networks; store: { ping(): Promise<void> }; rateLimiter: OpenedRateLimiter; keys: { failStatic: { outage: StoreOutage } } }) {
  // `service` lets the CLI tell a Nodegate gateway from anything else on its port (src/cli/store-guard.ts).
  app.get('/healthz', async () => ({ status: 'ok', service: 'nodegate' }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, string> = {};
    await Promise.all([
      bounded(deps.store.ping(), STORE_PING_MS).then(() => { checks.store = 'ok'; }, (e) => { checks.store = `degraded: ${(e as Error).message}`; }),
      ...deps.networks.list.map(async (n) => {
        // A fresh round of checks, so that an upstream that died a moment ago is not reported up.
        await n.chain.check();
        const up = n.chain.status().filter((s) => s.state === 'up').length;
        checks[`network:${n.name}`] = up > 0 ? 'ok' : 'down: no upstream answers with this chain';
      }),
    ]);
    const upstreams = deps.networks.list.flatMap((n) => n.chain.status());
    const ready = Object.entries(checks).every(([k, v]) => v === 'ok' || k === 'store');
    const degraded = checks.store !== 'ok';
    const outage = deps.keys.failStatic.outage.status();
    const store = { ...outage, sinceMs: undefined, since: outage.sinceMs === undefined ? undefined : new Date(outage.sinceMs).toISOString() };
    // Limits degraded to this instance's memory (Redis unreachable) still serve: reported, not a reason to stop traffic.
    const limiter = deps.rateLimiter.status();
    const limits = limiter === 'degraded' ? 'degraded: Redis (or the workers\' primary) unreachable, limiting in local memory'
      : limiter === 'primary' ? 'primary: shared by the workers, kept in their primary process' : limiter;
    const status = !ready ? 'not ready' : degraded ? 'degraded' : 'ready';
    // `pid`: which process answered (several serve one port with `--workers N`).
    return reply.code(ready ? 200 : 503).send({ status, checks, upstreams, limits, store, pid: process.pid });
  });
}

/** How long `/readyz` waits for the store (a hung server must not hang the probe). */
export const STORE_PING_MS = 1000;

