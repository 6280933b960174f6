import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadConfig } from './load.ts';

/**
 * README.md's list of environment variables (its "## Configuration" section, before the example) is kept equal to
 * the variables the configuration loader reads: a variable the README names is one the gateway honours, and one
 * the loader reads is one the README names. The loader's reads are recorded, not grepped: it is run on an
 * environment that notes every name asked of it.
 */

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The `NAME`s written in README.md's "## Configuration" section before its first example. */
function readmeVariables(md: string): string[] {
  const start = md.indexOf('\n## Configuration\n');
  const prose = md.slice(start, md.indexOf('```', start));
  return [...new Set([...prose.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]))];
}

/** The variables loadConfig reads, with no file and an empty environment. */
function loaderVariables(): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, name) {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadConfig(undefined, env);
  return [...read];
}

/** What one list has that the other lacks, each side named; empty when they are equal. */
function drift(readme: string[], loader: string[]): string[] {
  const missing = loader.filter((v) => !readme.includes(v));
  const extra = readme.filter((v) => !loader.includes(v));
  return [
    ...(missing.length ? [`README.md lacks: ${missing.join(', ')}`] : []),
    ...(extra.length ? [`README.md lists, but src/config/load.ts does not read: ${extra.join(', ')}`] : []),
  ];
}

test("README.md's environment variables are those the configuration loader reads", () => {
  assert.deepEqual(drift(readmeVariables(README), loaderVariables()), []);
});

test('the comparison names a variable the README lacks and one the loader does not read', () => {
  const edited = README.replace('`DATABASE_URL`, `REDIS_URL`)', '`DATABASE_URL`, `NODEGATE_REDIS`)');
  assert.notEqual(edited, README, 'the README text this test edits exists');
  assert.deepEqual(drift(readmeVariables(edited), loaderVariables()), [
    'README.md lacks: REDIS_URL',
    'README.md lists, but src/config/load.ts does not read: NODEGATE_REDIS',
  ]);
});

test('the variables are read from the README and from the loader', () => {
  assert.ok(readmeVariables(README).includes('DATABASE_URL'), `README: ${readmeVariables(README).join(', ')}`);
  assert.ok(loaderVariables().includes('DATABASE_URL'), `loader: ${loaderVariables().join(', ')}`);
});
