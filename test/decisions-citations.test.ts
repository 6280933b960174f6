import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

/**
 * Comments and docs cite the contract as `docs/decisions.md §N` (and some text as "DECISIONS N"): each citation must
 * name a section that docs/decisions.md has, so that a reader following it lands on the rule it means.
 */
const root = new URL('..', import.meta.url).pathname;

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(root, dir))) {
    const p = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(join(root, p)).isDirectory()) files(p, out);
    else if (/\.(ts|js|mjs|md)$/.test(name)) out.push(p);
  }
  return out;
}

test('every section of docs/decisions.md the code and docs cite exists', () => {
  const decisions = readFileSync(join(root, 'docs/decisions.md'), 'utf8');
  const sections = new Set([...decisions.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
  assert.ok(sections.size >= 11, `sections found: ${[...sections]}`);
  const cite = /(?:docs\/decisions\.md |decisions\.md |DECISIONS (?:sections? )?)§?(\d+)(?: and §?(\d+))?/g;
  const missing: string[] = [];
  let cited = 0;
  for (const f of [...files('src'), ...files('test'), ...files('docs'), 'README.md']) {
    for (const m of readFileSync(join(root, f), 'utf8').matchAll(cite)) {
      for (const n of [m[1], m[2]].filter(Boolean).map(Number)) {
        cited++;
        if (!sections.has(n)) missing.push(`${f}: §${n}`);
      }
    }
  }
  assert.deepEqual(missing, [], 'citations of sections docs/decisions.md does not have');
  assert.ok(cited > 50, `citations found: ${cited}`);
});

test('code and docs give reasons, not tracker numbers: no "issue N" in src, docs or the README', () => {
  const number = /\bissue #?\d+/i;
  assert.ok(number.test('see Issue 22') && !number.test('a known issue of geth'), 'the pattern finds a number and only a number');
  const found = [...files('src'), ...files('docs'), 'README.md'].flatMap((f) =>
    readFileSync(join(root, f), 'utf8').split('\n').flatMap((line, i) => (number.test(line) ? [`${f}:${i + 1}`] : [])));
  assert.deepEqual(found, []);
});
