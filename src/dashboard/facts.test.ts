import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { PLAN_LIMITS } from '../config/plan-limits.ts';
import { catalogue } from '../errors/catalogue.ts';
import { registerDashboard } from '../http/dashboard-route.ts';
import { KEY_TYPES, PERMISSIONS } from '../store/keys/api-key.ts';
import { WEBHOOK_KINDS } from '../webhooks/producer.ts';

test('the dashboard is served its domain facts from the modules that define them', async () => {
  const app = Fastify();
  await registerDashboard(app);
  try {
    const res = await app.inject({ method: 'GET', url: '/dashboard/facts.json' });
    assert.equal(res.statusCode, 200);
    const facts = res.json();
    assert.deepEqual(facts.permissions.map((p: { name: string }) => p.name), [...PERMISSIONS]);
    assert.deepEqual(facts.keyTypes.map((t: { name: string }) => t.name), [...KEY_TYPES]);
    assert.match(facts.keyTypes.find((t: { name: string }) => t.name === 'Dedicated').help, /dedicated upstreams/, 'what Dedicated means');
    assert.deepEqual(facts.webhookKinds.map((k: { name: string }) => k.name), [...WEBHOOK_KINDS]);
    assert.deepEqual(facts.planLimits, JSON.parse(JSON.stringify(PLAN_LIMITS)));
    // Every catalogue code, with what it means, e.g. -32005 (limits).
    for (const e of Object.values(catalogue)) assert.ok(facts.errorCodes.some((c: { code: number; meaning: string }) => c.code === e.code && c.meaning.includes(e.situation)), `${e.code}`);
    // The front end declares no facts of its own: no list of permissions or webhook kinds in its modules.
    const root = fileURLToPath(new URL('./public/', import.meta.url));
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.js') ? [join(dir, d.name)] : []));
    for (const f of files(root)) {
      const text = readFileSync(f, 'utf8');
      assert.doesNotMatch(text, /['"]address\.activity['"]\s*,|['"]webhooks['"],\s*['"]analytics['"]|['"]Dedicated['"],/, `${f} re-declares a domain list`);
    }
  } finally {
    await app.close();
  }
});
