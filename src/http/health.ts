import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/store.ts';
import type { Networks } from '../upstream/networks.ts';

/**
 * `/healthz`: the process is alive. `/readyz`: the store answers and every network's node answers
 * (DECISIONS 11); 503 with the failing parts otherwise, so a load balancer stops sending traffic.
 */
export function registerHealthRoutes(app: FastifyInstance, deps: { networks: Networks; store: Store }) {
  app.get('/healthz', async () => ({ status: 'ok' }));
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
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
}
