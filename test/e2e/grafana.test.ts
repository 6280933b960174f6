/**
 * deploy/grafana/nodegate.json is a dashboard Grafana provisions as it is: panels with unique ids laid out on the
 * 24-column grid without overlapping, every query on the dashboard's Prometheus data source variable, every variable
 * a query names defined. (Its queries against real data: test/e2e/prometheus.test.ts.)
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

interface Panel { id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; datasource?: { type: string; uid: string }; targets?: Array<{ refId: string; expr: string; datasource?: { uid: string } }> }
const dashboard = JSON.parse(readFileSync('deploy/grafana/nodegate.json', 'utf8')) as { uid: string; title: string; schemaVersion: number; panels: Panel[]; templating: { list: Array<{ name: string; type: string; query: unknown }> } };

test('panels have unique ids and sit on the grid without overlapping', () => {
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  const cells = new Map<string, string>();
  for (const p of dashboard.panels) {
    const { x, y, w, h } = p.gridPos;
    assert.ok(x >= 0 && w > 0 && x + w <= 24, `${p.title}: within 24 columns`);
    for (let i = x; i < x + w; i++) {
      for (let j = y; j < y + h; j++) {
        const other = cells.get(`${i},${j}`);
        assert.equal(other, undefined, `${p.title} overlaps ${other}`);
        cells.set(`${i},${j}`, p.title);
      }
    }
  }
});

test('every query is on the Prometheus data source variable, and every variable it names is defined', () => {
  assert.equal(dashboard.uid, 'nodegate');
  const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
  assert.equal(vars.get('datasource')?.type, 'datasource');
  assert.equal(vars.get('datasource')?.query, 'prometheus');
  const builtIn = new Set(['__rate_interval', '__interval', '__range']);
  const panels = dashboard.panels.filter((p) => p.type !== 'row');
  assert.ok(panels.length >= 20);
  for (const p of panels) {
    assert.deepEqual(p.datasource, { type: 'prometheus', uid: '${datasource}' }, p.title);
    assert.ok(p.targets && p.targets.length > 0, `${p.title} has queries`);
    assert.equal(new Set(p.targets.map((t) => t.refId)).size, p.targets.length, `${p.title}: one refId a query`);
    for (const t of p.targets) {
      for (const [, name] of t.expr.matchAll(/\$\{?(\w+)/g)) assert.ok(vars.has(name) || builtIn.has(name), `${p.title}: $${name} is defined`);
    }
  }
});
