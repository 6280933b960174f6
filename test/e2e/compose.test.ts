/**
 * deploy/compose.yaml and the files it mounts, checked without running it (no image registry here for PostgreSQL,
 * Redis and nginx): Nodegate's configuration validates and its stop fits in compose's grace period; it waits for a
 * healthy PostgreSQL and Redis; every secret it interpolates is in env.example; every file it mounts exists; Debian's
 * nginx accepts the nginx configuration (`nginx -t`, the service names pointed at 127.0.0.1 and a certificate made
 * here); Debian's promtool accepts the Prometheus configuration with the alerting rules; Grafana's provisioning
 * finds the dashboard where compose mounts it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.ts';
import { NGINX, nginxSkipReason } from '../helpers/balancer.ts';
import { PROMTOOL, prometheusSkipReason } from '../helpers/prometheus.ts';

const DIR = 'deploy';
const compose = parse(readFileSync(join(DIR, 'compose.yaml'), 'utf8')) as { services: Record<string, any> };
const ng = compose.services.nodegate;
const tmp = mkdtempSync(join(tmpdir(), 'nodegate-compose-'));
const seconds = (s: string) => Number(/^(\d+)s$/.exec(s)![1]);

describe('the compose file', () => {
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('Nodegate, PostgreSQL, Redis and nginx; Nodegate waits for a healthy store and Redis', () => {
    for (const s of ['nodegate', 'postgres', 'redis', 'nginx']) assert.ok(compose.services[s], s);
    assert.deepEqual(ng.depends_on.postgres, { condition: 'service_healthy' });
    assert.deepEqual(ng.depends_on.redis, { condition: 'service_healthy' });
    assert.deepEqual(compose.services.nginx.depends_on.nodegate, { condition: 'service_healthy' });
    assert.ok(ng.healthcheck.test.join(' ').includes('/healthz'), 'nginx waits for Nodegate\'s /healthz, whatever the image\'s format');
    for (const s of ['postgres', 'redis']) assert.ok(compose.services[s].healthcheck, `${s} has a health check`);
    assert.match(ng.environment.DATABASE_URL, /^postgres:\/\/.*@postgres:5432\//);
    assert.match(ng.environment.REDIS_URL, /^redis:\/\/.*@redis:6379$/);
    assert.equal(ng.build.dockerfile, 'deploy/Containerfile');
    assert.ok(existsSync(join(DIR, ng.build.context, ng.build.dockerfile)));
  });

  test('its configuration validates, and the stop\'s deadline fits in the grace period', () => {
    const mount = (ng.volumes as string[]).find((v) => v.endsWith(':/etc/nodegate/nodegate.yaml:ro'))!;
    const config = validateConfig(parse(readFileSync(join(DIR, mount.split(':')[0]), 'utf8')));
    assert.deepEqual(ng.command, ['start', '--config', '/etc/nodegate/nodegate.yaml']);
    assert.ok(seconds(ng.stop_grace_period) * 1000 > config.server.stopDeadlineMs, `${ng.stop_grace_period} > ${config.server.stopDeadlineMs} ms`);
    assert.equal(ng.read_only, true);
    assert.ok((ng.tmpfs as string[]).some((t) => t.startsWith('/data:uid=10001,')), 'a writable /data for the image\'s user');
    assert.equal(config.server.host, '0.0.0.0');
  });

  test('every variable it needs is in env.example, and every file it mounts exists', () => {
    const text = readFileSync(join(DIR, 'compose.yaml'), 'utf8');
    const example = readFileSync(join(DIR, 'compose/env.example'), 'utf8');
    const vars = new Set([...text.matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]));
    assert.deepEqual([...vars].filter((v) => !new RegExp(`^${v}=`, 'm').test(example)), []);
    const mounts = Object.values(compose.services).flatMap((s: any) => (s.volumes ?? []) as string[]).filter((v) => v.startsWith('./'));
    assert.deepEqual(mounts.map((v) => v.split(':')[0]).filter((p) => !existsSync(join(DIR, p))), []);
  });

  test('nginx -t accepts its nginx configuration', { skip: nginxSkipReason('compose') }, () => {
    const cert = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', join(tmp, 'key.pem'), '-out', join(tmp, 'cert.pem')], { encoding: 'utf8' });
    assert.equal(cert.status, 0, cert.stderr);
    const site = readFileSync(join(DIR, 'compose/nginx.conf'), 'utf8').replace(/server nodegate:/g, 'server 127.0.0.1:').replace(/\/etc\/nginx\/tls\//g, `${tmp}/`);
    writeFileSync(join(tmp, 'site.conf'), site);
    writeFileSync(join(tmp, 'nginx.conf'), `pid ${tmp}/nginx.pid;\nerror_log ${tmp}/error.log;\nevents {}\nhttp {\n  access_log off;\n  include ${tmp}/site.conf;\n}\n`);
    const r = spawnSync(NGINX, ['-t', '-p', tmp, '-c', join(tmp, 'nginx.conf')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  test('promtool accepts its Prometheus configuration with the alerting rules', { skip: prometheusSkipReason('compose') }, () => {
    const conf = readFileSync(join(DIR, 'compose/prometheus.yml'), 'utf8').replace('/etc/prometheus/alerts.yaml', join(process.cwd(), DIR, 'prometheus/alerts.yaml'));
    writeFileSync(join(tmp, 'prometheus.yml'), conf);
    const r = spawnSync(PROMTOOL, ['check', 'config', join(tmp, 'prometheus.yml')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS: 13 rules found/);
  });

  test('Grafana\'s provisioning finds the dashboard where compose mounts it', () => {
    const provider = parse(readFileSync(join(DIR, 'grafana/provisioning/dashboards/nodegate.yaml'), 'utf8')).providers[0];
    const mount = (compose.services.grafana.volumes as string[]).find((v) => v.startsWith('./grafana/nodegate.json:'))!;
    assert.equal(dirname(mount.split(':')[1]), provider.options.path);
    const datasource = parse(readFileSync(join(DIR, 'grafana/provisioning/datasources/prometheus.yaml'), 'utf8')).datasources[0];
    assert.equal(new URL(datasource.url).hostname, 'prometheus');
    assert.ok(compose.services.prometheus);
  });
});
