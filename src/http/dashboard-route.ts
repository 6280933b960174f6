import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
    // A page's address typed or bookmarked as a path (`/dashboard/settings`, `/dashboard/keys/<id>`) opens the
    // dashboard at that page: the front end routes by the hash and reads such a path once, at load.
    const page = (req: FastifyRequest, reply: FastifyReply) => (req.url.includes('.') ? reply.callNotFound() : reply.type('text/html; charset=utf-8').sendFile('index.html'));
    d.get('/dashboard/:page', page);
    d.get('/dashboard/:page/:id', page);
    d.get('/dashboard/operator/:page', page);
    // The gateway's root is where a person lands first: the dashboard.
    d.get('/', (_req, reply) => reply.redirect('/dashboard/'));
    // The front end's domain facts (permissions, key types, roles, webhook kinds, plan limits, error codes), made
    // from the modules that define them: the page declares none of its own.
    d.get('/dashboard/facts.json', async () => facts);
    // Kept for scripts written against it; facts.json has the same list as planLimits.
    d.get('/dashboard/plan-limits.json', async () => PLAN_LIMITS);
  });
}
