/**
 * deploy/kubernetes rendered as `kubectl apply -k` renders it (test/helpers/kustomize.ts), each overlay's objects
 * checked against Kubernetes' own schemas (kubernetes-models: the API's OpenAPI definitions as validators; the
 * ServiceMonitor against the Prometheus Operator's), and against the code: the grace period outlasts the preStop
 * pause plus the stop's deadline of the configuration the pods run (schema defaults included); the probes' paths
 * answer on a real gateway; the startup probe outlasts the wait for PostgreSQL; the readiness probe outlasts /readyz's
 * wait for the store; names and selectors agree (Service → pods, HPA → Deployment, ServiceMonitor → Service port).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { validateConfig } from '../../src/config/load.ts';
import { DRAIN_QUIET_MS } from '../../src/http/drain.ts';
import { STORE_PING_MS } from '../../src/http/health.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { kustomize, type Manifest } from '../helpers/kustomize.ts';

const OVERLAYS = ['production', 'staging'];
const MODELS: Record<string, { new (data: any): { validate(): void } }> = {
  'apps/v1/Deployment': Deployment, 'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy, 'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap, 'v1/Namespace': Namespace, 'v1/Secret': Secret, 'v1/Service': Service,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};
const rendered = Object.fromEntries(OVERLAYS.map((o) => [o, kustomize(`deploy/kubernetes/overlays/${o}`)]));
/** The Secret's example: outside the kustomization, so that `kubectl apply -k` never overwrites the real Secret. */
const secret = parse(readFileSync('deploy/kubernetes/secret.example.yaml', 'utf8')) as Manifest;
const one = (docs: Manifest[], kind: string) => {
  const found = docs.filter((d) => d.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0];
};
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('the Kubernetes manifests', () => {
  for (const overlay of OVERLAYS) {
    test(`${overlay}: every object is valid against Kubernetes' schema, in the overlay's namespace`, () => {
      const docs = rendered[overlay];
      assert.deepEqual(docs.map((d) => d.kind).sort(), ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Namespace', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'ServiceMonitor']);
      const namespace = one(docs, 'Namespace').metadata.name;
      for (const d of docs) {
        const Model = MODELS[`${d.apiVersion}/${d.kind}`];
        assert.ok(Model, `a schema for ${d.apiVersion} ${d.kind}`);
        assert.doesNotThrow(() => new Model(d).validate(), `${d.kind} ${d.metadata.name}`);
        if (d.kind !== 'Namespace') assert.equal(d.metadata.namespace, namespace, `${d.kind} in ${namespace}`);
      }
      assert.match(one(docs, 'Deployment').spec.template.spec.containers[0].image, /^registry\.example\.com\/nodegate:\d/);
    });

    test(`${overlay}: the grace period, the probes and the stop agree with the code's timings`, () => {
      const docs = rendered[overlay];
      const pod = one(docs, 'Deployment').spec.template.spec;
      const c = pod.containers[0];
      const config = validateConfig(parse(one(docs, 'ConfigMap').data['nodegate.yaml']));
      // What the pods' configuration gives, defaults filled as at start-up; stopDeadlineMs covers the drain.
      const stopMs = config.server.stopDeadlineMs;
      assert.ok(stopMs > DRAIN_QUIET_MS, 'the drain fits in the stop\'s deadline');
      const preStopMs = Number(c.lifecycle.preStop.exec.command[1]) * 1000;
      assert.deepEqual(c.lifecycle.preStop.exec.command.slice(0, 1), ['sleep']);
      const graceMs = pod.terminationGracePeriodSeconds * 1000;
      console.log(`kubernetes (${overlay}): grace ${graceMs} ms > preStop ${preStopMs} ms + server.stopDeadlineMs ${stopMs} ms`);
      assert.ok(graceMs > preStopMs + stopMs, `terminationGracePeriodSeconds (${graceMs} ms) outlasts preStop (${preStopMs} ms) + stopDeadlineMs (${stopMs} ms)`);
      // The container's args name the file the ConfigMap is mounted as.
      const mount = c.volumeMounts.find((m: { name: string }) => m.name === 'config').mountPath;
      assert.deepEqual(c.args, ['start', '--config', `${mount}/nodegate.yaml`]);
      // The startup probe lets a start wait for PostgreSQL as long as database.startWaitMs.
      assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold * 1000 > config.database.startWaitMs);
      // /readyz waits up to STORE_PING_MS for the store: the probe waits longer, so a slow store is "degraded", not a failed probe.
      assert.ok(c.readinessProbe.timeoutSeconds * 1000 > STORE_PING_MS);
      assert.equal(c.livenessProbe.httpGet.path, '/healthz');
      assert.equal(c.readinessProbe.httpGet.path, '/readyz');
      // The named port is the one the configuration listens on, and every probe uses it.
      const port = c.ports.find((p: { name: string }) => p.name === 'http');
      assert.equal(port.containerPort, config.server.port);
      assert.equal(config.server.host, '0.0.0.0');
      for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) assert.equal(probe.httpGet.port, 'http');
      // A read-only root: the data directory is a volume.
      assert.equal(c.securityContext.readOnlyRootFilesystem, true);
      assert.ok(c.volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/data'));
      assert.equal(pod.securityContext.runAsUser, 10001);
    });

    test(`${overlay}: selectors and names agree`, () => {
      const docs = rendered[overlay];
      const deployment = one(docs, 'Deployment');
      const labels = deployment.spec.template.metadata.labels;
      const service = one(docs, 'Service');
      assert.ok(matches(service.spec.selector, labels), 'the Service selects the pods');
      assert.ok(matches(one(docs, 'PodDisruptionBudget').spec.selector.matchLabels, labels), 'the PDB selects the pods');
      assert.ok(matches(one(docs, 'NetworkPolicy').spec.podSelector.matchLabels, labels), 'the NetworkPolicy selects the pods');
      assert.ok(matches(deployment.spec.selector.matchLabels, labels));
      const hpa = one(docs, 'HorizontalPodAutoscaler');
      assert.deepEqual([hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name], ['Deployment', deployment.metadata.name]);
      assert.ok(hpa.spec.minReplicas >= 2, 'two pods at least, so that an eviction the PDB allows leaves one serving');
      const monitor = one(docs, 'ServiceMonitor');
      assert.ok(matches(monitor.spec.selector.matchLabels, service.metadata.labels), 'the ServiceMonitor selects the Service');
      assert.ok(service.spec.ports.some((p: { name: string }) => p.name === monitor.spec.endpoints[0].port));
      // The alerts' job label is the Service's name (the ServiceMonitor's default job).
      assert.equal(service.metadata.name, 'nodegate');
      const env = deployment.spec.template.spec.containers[0].env as Array<{ name: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }>;
      for (const name of ['DATABASE_URL', 'REDIS_URL']) {
        const ref = env.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
        assert.ok(ref && ref.name === secret.metadata.name && ref.key in secret.stringData, `${name} from the Secret`);
      }
    });
  }

  test('the Secret\'s example is valid and holds what the pods read from it, as placeholders', () => {
    assert.doesNotThrow(() => new Secret(secret as any).validate());
    assert.deepEqual(Object.keys(secret.stringData).sort(), ['DATABASE_URL', 'REDIS_URL']);
    for (const v of Object.values(secret.stringData)) assert.match(String(v), /REPLACE-ME/);
  });

  test('production runs at least three pods', () => {
    assert.ok(one(rendered.production, 'HorizontalPodAutoscaler').spec.minReplicas >= 3);
    assert.equal(one(rendered.staging, 'Deployment').spec.template.spec.containers[0].resources.requests.cpu, '250m');
  });

  describe('the probes and the metrics path on a real gateway', () => {
    let g: TestGateway;
    before(async () => { g = await startTestGateway(); });
    after(async () => { await g?.close(); });

    test('every path the manifests name answers 200', async () => {
      const docs = rendered.production;
      const c = one(docs, 'Deployment').spec.template.spec.containers[0];
      const paths = [c.startupProbe, c.livenessProbe, c.readinessProbe].map((p) => p.httpGet.path).concat(one(docs, 'ServiceMonitor').spec.endpoints[0].path);
      for (const path of new Set(paths)) assert.equal((await fetch(g.url + path)).status, 200, path);
    });
  });
});
