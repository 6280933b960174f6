import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../analytics/metrics.ts';
import { ipAllowed, parseAllowlist } from '../auth/ip-allowlist.ts';

/**
 * `/metrics` in Prometheus' text format, for the operator's scraper: only to the addresses of `metrics.allow`
 * (loopback by default); anyone else gets the 404 of a route that does not exist.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, allow: readonly string[]): void {
  const ranges = parseAllowlist(allow);
  app.get('/metrics', async (req, reply) => {
    if (!ipAllowed(req.ip, ranges)) return reply.code(404).type('application/json').send({ error: { code: 'not_found', message: 'no route GET /metrics' } });
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
