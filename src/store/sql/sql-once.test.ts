/**
 * SQL is written once, and only in the store: no statement's text appears twice in src/store (a second copy is a
 * second dialect's or a second domain's, to be written once with Kysely or shared), and no module outside src/store
 * holds SQL (it goes through a domain store). Statements are found as they are written: string literals and
 * templates (the `sql` tag's included) holding a SELECT, INSERT, UPDATE or DELETE statement, compared with their
 * whitespace folded. Tests and migrations are not read: tests look at rows as they are kept, and a migration's DDL
 * is its own.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Source files under `dir` (relative to the root), tests and contracts excluded. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.contract.ts') ? [p] : [];
  });
}

/**
 * A statement: its keywords in capitals, as SQL is written here (Kysely writes the rest), and in a statement's shape,
 * so that prose ("Select a plan from the list") is not taken for one.
 */
const STATEMENT = /\b(SELECT\b[\s\S]*\bFROM\b|SELECT\s+\d|INSERT\s+(OR\s+[A-Z]+\s+)?INTO\b|UPDATE\s+\S+\s+SET\b|DELETE\s+FROM\b)/;

/** Keywords after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await']);

/**
 * The string literals of a TypeScript source, in order: quoted strings, and templates with each `${…}` read as
 * `${}` (a template inside one is a literal of its own). Comments and regular expressions are skipped.
 */
function literals(src: string): string[] {
  const out: string[] = [];
  let i = 0;
  // The last significant token outside literals: a `/` after an operand is a division, elsewhere a regex.
  let last = '';
  const regexMayStart = () => last === '' || BEFORE_REGEX.has(last) || /^[(,=:[!&|?{};+\-*%<>~^]$/.test(last);
  const quoted = (q: string) => {
    let text = '';
    for (i++; i < src.length && src[i] !== q; i++) text += src[i] === '\\' ? src[i] + src[++i] : src[i];
    i++;
    return text;
  };
  const template = () => {
    let text = '';
    for (i++; i < src.length && src[i] !== '`'; ) {
      if (src[i] === '\\') {
        text += src[i] + src[i + 1];
        i += 2;
      } else if (src[i] === '$' && src[i + 1] === '{') {
        i += 2;
        code(true);
        text += '${}';
      } else text += src[i++];
    }
    i++;
    return text;
  };
  const regex = () => {
    let inClass = false;
    for (i++; i < src.length && (inClass || src[i] !== '/'); i++) {
      if (src[i] === '\\') i++;
      else if (src[i] === '[') inClass = true;
      else if (src[i] === ']') inClass = false;
    }
    for (i++; /[a-z]/.test(src[i] ?? ''); i++);
  };
  /** Reads code up to the end, or (inside a template's `${`) to the `}` that closes it. */
  const code = (inside: boolean) => {
    let depth = 0;
    while (i < src.length) {
      const c = src[i];
      if (c === '/' && src[i + 1] === '/') i = src.indexOf('\n', i) < 0 ? src.length : src.indexOf('\n', i);
      else if (c === '/' && src[i + 1] === '*') i = src.indexOf('*/', i + 2) < 0 ? src.length : src.indexOf('*/', i + 2) + 2;
      else if (c === '"' || c === "'") [out[out.length], last] = [quoted(c), 'a'];
      else if (c === '`') [out[out.length], last] = [template(), 'a'];
      else if (c === '/' && regexMayStart()) [last] = [(regex(), 'a')];
      else if (/\s/.test(c)) i++;
      else if (/[\w$]/.test(c)) {
        const word = /^[\w$]+/.exec(src.slice(i, i + 64))![0];
        i += word.length;
        last = word;
      } else {
        if (inside && c === '{') depth++;
        if (inside && c === '}' && depth-- === 0) {
          i++;
          return;
        }
        last = c;
        i++;
      }
    }
  };
  code(false);
  return out;
}

/** The SQL statements of a source, whitespace folded. */
const statements = (src: string) => literals(src).filter((l) => STATEMENT.test(l)).map((l) => l.replace(/\s+/g, ' ').trim());

/** Each statement written more than once among `files` (path → source), with where. */
function writtenTwice(files: ReadonlyMap<string, string>): string[] {
  const where = new Map<string, string[]>();
  for (const [file, src] of files) for (const s of statements(src)) where.set(s, [...(where.get(s) ?? []), file]);
  return [...where].filter(([, at]) => at.length > 1).map(([s, at]) => `${at.join(', ')}: ${s}`);
}

/** Modules outside src/store that hold SQL, with the statement. */
const sqlElsewhere = (files: ReadonlyMap<string, string>) =>
  [...files].flatMap(([file, src]) => (file.startsWith('src/store/') ? [] : statements(src).map((s) => `${file}: ${s}`)));

const read = (files: string[]) => new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));

test('no SQL statement is written twice in src/store', () => {
  const store = sources('src/store').filter((f) => !f.startsWith('src/store/migrations/'));
  assert.ok(store.length > 20, `${store.length} store modules`);
  assert.deepEqual(writtenTwice(read(store)), []);
});

test('no module outside src/store holds SQL', () => {
  const elsewhere = sources('src').filter((f) => !f.startsWith('src/store/'));
  assert.ok(elsewhere.length > 100, `${elsewhere.length} modules`);
  assert.deepEqual(sqlElsewhere(read(elsewhere)), []);
});

test('the rules bite: a statement written twice (whatever its spacing), and SQL outside the store, are named', () => {
  const files = new Map([
    ['src/store/a.ts', "const q = `SELECT value\n    FROM meta WHERE name = ${name}`; // SELECT 1 FROM nowhere: a comment is not read\n"],
    ['src/store/b.ts', "const re = /'/g; const q = sql`SELECT value FROM meta WHERE name = ${n}`; const p = 'DELETE FROM meta';"],
    ['src/store/c.ts', 'const other = "SELECT value FROM meta WHERE name = ?"; const prose = `Select a plan from the list`;'],
    ['src/api/routes.ts', "await db.query('UPDATE api_keys SET name = $1 WHERE id = $2', [name, id]);"],
  ]);
  assert.deepEqual(writtenTwice(files), ['src/store/a.ts, src/store/b.ts: SELECT value FROM meta WHERE name = ${}']);
  assert.deepEqual(sqlElsewhere(files), ['src/api/routes.ts: UPDATE api_keys SET name = $1 WHERE id = $2']);
  // Literals as written: a template's parts, a template inside one, a regex and a division skipped.
  assert.deepEqual(literals("const a = x / 2, b = `A ${f(`B ${c}`)} C`, r = /`/; // 'no'\n/* \"no\" */ 'd'"), ['B ${}', 'A ${} C', 'd']);
});
