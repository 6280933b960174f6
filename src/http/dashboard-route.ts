import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { fileURLToPath } from 'node:url';
import { PLAN_LIMITS } from '../config/plan-limits.ts';
import { dashboardFacts } from '../dashboard/facts.ts';

/** The dashboard's files: plain HTML, CSS and JavaScript modules, served as they are (no CDN, no build, works offline). */
const ROOT = fileURLToPath(new URL('../dashboard/public/', import.meta.url));

/**
 * `/dashboard`: the web dashboard (docs/decisions.md §6 and §10), a page of the gateway's own that talks to `/api/v1` with
 * the session cookie. Its own strict Content-Security-Policy: scripts and styles only from this origin, no inline
 * script, no frames, so that text a user typed (a key's name) can never run as code even if it reached the page.
 */
export async function registerDashboard(app: FastifyInstance): Promise<void> {
  const facts = dashboardFacts();
  await app.register(async (d) => {
    d.addHook('onSend', async (_req, reply) => {
      reply.header('content-security-policy', "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('cache-control', 'no-cache');
    });
    await d.register(fastifyStatic, { root: ROOT, prefix: '/dashboard/', index: 'index.html', wildcard: false });
    d.get('/dashboard', (_req, reply) => reply.redirect('/dashboard/'));
    // The front end's domain facts (permissions, key types, roles, webhook kinds, plan limits, error codes), made
    // from the modules that define them: the page declares none of its own.
    d.get('/dashboard/facts.json', async () => facts);
    // Kept for scripts written against it; facts.json has the same list as planLimits.
    d.get('/dashboard/plan-limits.json', async () => PLAN_LIMITS);
  });
}
