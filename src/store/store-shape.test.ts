/**
 * The store's shape, kept as it is built: narrow stores by domain rather than one interface every consumer imports.
 * Each rule runs on the real tree and, first, on a small input that breaks it, so that it is seen to fail.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MAX_IMPORTERS = 20;
const MAX_METHODS = 15;

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'public' ? [] : files(p);
    return /\.(ts|mjs)$/.test(e.name) ? [p] : [];
  });
}

const IMPORT = /(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/**
 * Files of the store imported by more than `max` other files, with how many. A file's own folder does not count:
 * each migration step names the step type it is, which makes no consumer of it.
 */
export function overImported(sources: ReadonlyMap<string, string>, max: number): string[] {
  const by = new Map<string, Set<string>>();
  for (const [file, text] of sources) {
    for (const m of text.matchAll(IMPORT)) {
      const target = relative(root, resolve(join(root, dirname(file)), m[1] ?? m[2]));
      if (!target.startsWith('src/store/') || target === file || dirname(target) === dirname(file)) continue;
      (by.get(target) ?? by.set(target, new Set()).get(target)!).add(file);
    }
  }
  return [...by].filter(([, s]) => s.size > max).map(([t, s]) => `${t}: ${s.size}`);
}

/** Store interfaces (`export interface …Store {`) with more than `max` methods, with how many. */
export function wideStores(sources: ReadonlyMap<string, string>, max: number): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) {
    for (const m of text.matchAll(/export interface (\w+Store)\b[^{]*\{([\s\S]*?)\n\}/g)) {
      const methods = m[2].split('\n').filter((l) => /^ {2}\w+\??\(/.test(l)).length;
      if (methods > max) out.push(`${file} ${m[1]}: ${methods}`);
    }
  }
  return out;
}

const read = (list: string[]) => new Map(list.map((f) => [f, readFileSync(join(root, f), 'utf8')]));

test('no file of the store is imported by more than 20 others (src, test, bench)', () => {
  const broken = new Map([...Array.from({ length: 21 }, (_, i) => [`src/x/f${i}.ts`, `import { a } from '../store/god.ts';`] as const)]);
  assert.deepEqual(overImported(broken, MAX_IMPORTERS), ['src/store/god.ts: 21'], 'the rule sees a file imported 21 times');
  assert.deepEqual(overImported(read([...files('src'), ...files('test'), ...files('bench')]), MAX_IMPORTERS), []);
});

test('no store interface has more than 15 methods', () => {
  const wide = `export interface GodStore {\n${Array.from({ length: 16 }, (_, i) => `  m${i}(): Promise<void>;`).join('\n')}\n}`;
  assert.deepEqual(wideStores(new Map([['src/store/god.ts', wide]]), MAX_METHODS), ['src/store/god.ts GodStore: 16'], 'the rule sees 16 methods');
  assert.deepEqual(wideStores(read(files('src/store')), MAX_METHODS), []);
});
