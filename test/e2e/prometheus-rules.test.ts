/**
 * The alerting rules (deploy/prometheus/alerts.yaml) pass Debian's `promtool check rules`, and their unit tests
 * (alerts.test.yaml) pass `promtool test rules`; every alert has a test in which it fires, and a runbook section in
 * docs/production.md that says what it means and what to do.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { PROMTOOL, prometheusSkipReason } from '../helpers/prometheus.ts';

const RULES = 'deploy/prometheus/alerts.yaml';
const TESTS = 'deploy/prometheus/alerts.test.yaml';
const skip = prometheusSkipReason('prometheus-rules');

interface Rule { alert: string; expr: string; annotations: { runbook: string } }
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);

describe('the alerting rules', () => {
  test('promtool check rules finds them valid', { skip }, () => {
    const r = spawnSync(PROMTOOL, ['check', 'rules', RULES], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  test('their unit tests pass under promtool test rules', { skip }, () => {
    const r = spawnSync(PROMTOOL, ['test', 'rules', TESTS], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS/);
  });

  test('every alert fires in one of the unit tests', () => {
    const tests = parse(readFileSync(TESTS, 'utf8')) as { tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }> };
    const fired = new Set(tests.tests.flatMap((t) => t.alert_rule_test).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname));
    assert.deepEqual(rules.map((r) => r.alert).filter((a) => !fired.has(a)), []);
  });

  test('every alert\'s runbook is a section of docs/production.md', () => {
    const doc = readFileSync('docs/production.md', 'utf8');
    const anchors = new Set([...doc.matchAll(/^#+ (.+)$/gm)].map((m) => m[1].trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    const missing = rules.filter((r) => {
      const [file, anchor] = r.annotations.runbook.split('#');
      return file !== 'docs/production.md' || !anchors.has(anchor);
    });
    assert.deepEqual(missing.map((r) => `${r.alert}: ${r.annotations.runbook}`), []);
  });
});
