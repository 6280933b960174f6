import type { FastifyInstance } from 'fastify';
import type { OpenedRateLimiter } from '../limits/open-rate-limiter.ts';
import type { Store } from '../store/store.ts';
import type { Networks } from '../upstream/networks.ts';

/**
 * `/healthz`: the process is alive. `/readyz`: the store answers and every network's node answers
 * (DECISIONS 11); 503 with the failing parts otherwise, so a load balancer stops sending traffic. It also says
 * where the per-second limits are kept (`memory`, `redis`, or `degraded`).
 */
export function registerHealthRoutes(app: FastifyInstance, deps: { networks: Networks; store: Store; rateLimiter: OpenedRateLimiter }) {
  // `service` lets the CLI tell a Nodegate gateway from anything else on its port (src/cli/store-guard.ts).
  app.get('/healthz', async () => ({ status: 'ok', service: 'nodegate' }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, string> = {};
    await Promise.all([
      deps.store.ping().then(() => { checks.store = 'ok'; }, (e) => { checks.store = `down: ${(e as Error).message}`; }),
      ...deps.networks.list.map(async (n) => {
        try {
          const a = await n.upstream.call('eth_chainId', [], 2000);
          checks[`network:${n.name}`] = a.result !== undefined && Number(a.result) === n.chainId ? 'ok' : `wrong chain id ${String(a.result)}`;
        } catch (e) {
          checks[`network:${n.name}`] = `down: ${(e as Error).message}`;
        }
      }),
    ]);
    const ready = Object.values(checks).every((v) => v === 'ok');
    // Limits degraded to this instance's memory (Redis unreachable) still serve: reported, not a reason to stop traffic.
    const limiter = deps.rateLimiter.status();
    const limits = limiter === 'degraded' ? 'degraded: Redis unreachable, limiting in local memory' : limiter;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks, limits });
  });
}
