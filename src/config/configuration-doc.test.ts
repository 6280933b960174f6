import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { configSchema } from './schema.ts';

/**
 * docs/configuration.md's field table is kept equal to the configuration schema (schema.ts), as docs/errors.md is to
 * the catalogue: every field of the schema has a row, every row is a field, the default written is the schema's, the
 * unit column starts with the schema's `unit`, and it writes every bound of the schema (`≥ 1024`, `1–1000`, `≤ 60`,
 * `20 to 60000`; a floor of 0 or 1 goes without saying) as the schema has it. Map keys are written `<name>` in the
 * doc and `*` here; array items `[]`.
 */

interface Field {
  path: string;
  schema: Record<string, any>;
  required: boolean;
}

/** Every field of the schema: leaves, arrays, and maps of leaves (`rpc.extraMethods.*`, with the map's default). */
function schemaFields(s: Record<string, any>, path = '', required = false, out: Field[] = []): Field[] {
  if (s.properties) {
    if (path && s.type === 'array') out.push({ path, schema: s, required });
    for (const [k, v] of Object.entries<Record<string, any>>(s.properties)) {
      schemaFields(v, path ? `${path}.${k}` : k, (s.required ?? []).includes(k), out);
    }
  } else if (s.type === 'object' && typeof s.additionalProperties === 'object') {
    const value = s.additionalProperties;
    if (value.properties) schemaFields(value, `${path}.*`, false, out);
    else out.push({ path: `${path}.*`, schema: { ...value, default: s.default }, required: false });
  } else if (s.type === 'array' && s.items?.properties) {
    out.push({ path, schema: s, required });
    schemaFields(s.items, `${path}[]`, false, out);
  } else {
    out.push({ path, schema: s, required });
  }
  return out;
}

interface Row {
  default: string;
  unit: string;
}

/** The field table's rows by path; a row naming several fields (`a.b.x`, `.y`) gives one entry per field. */
function documentedRows(): Map<string, Row> {
  const md = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const table = md.slice(md.indexOf('## Fields'), md.indexOf('\n\n', md.indexOf('| field |')));
  const rows = new Map<string, Row>();
  for (const line of table.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const [fieldCell, defaultCell, unit] = line.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim());
    const names = [...fieldCell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const defaults = [...defaultCell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const first = names[0].replace(/<[^>]+>/g, '*');
    const parent = first.slice(0, first.lastIndexOf('.'));
    names.forEach((n, i) => {
      const path = n.startsWith('.') ? parent + n : first;
      assert.ok(!rows.has(path), `docs/configuration.md: ${path} has two rows`);
      rows.set(path, { default: names.length > 1 ? (defaults[i] ?? '') : defaultCell, unit });
    });
  }
  return rows;
}

/** A default as the doc writes it: text bare, lists and maps as JSON. */
function written(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const bare = (s: string) => s.replace(/^`|`$/g, '').replace(/\s+/g, '');
const num = (s: string) => Number(s.replace(/,/g, ''));

/** Fields whose real default is not the schema's literal (filled at load, or a table in code). */
const DEFAULT_ELSEWHERE = new Set(['limits.costs.*']);

test('docs/configuration.md has a row for every field of the schema and no other', () => {
  const documented = [...documentedRows().keys()].sort();
  const fields = schemaFields(configSchema).map((f) => f.path).sort();
  assert.deepEqual(documented.filter((p) => !fields.includes(p)), [], 'rows that are no field of src/config/schema.ts');
  assert.deepEqual(fields.filter((p) => !documented.includes(p)), [], 'fields of src/config/schema.ts without a row');
});

test('docs/configuration.md says "deprecated" in the row of each field the schema marks deprecated, and only there', () => {
  const md = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const said = new Set([...md.matchAll(/^\| `([^`]+)` \|.*\| deprecated\b/gm)].map((m) => m[1]));
  const marked = schemaFields(configSchema).filter((f) => f.schema.deprecated === true).map((f) => f.path);
  assert.deepEqual([...said].sort(), marked.sort());
  assert.ok(marked.length > 0);
});

test('docs/configuration.md writes each default as the schema has it, and (required) where there is none', () => {
  const rows = documentedRows();
  for (const f of schemaFields(configSchema)) {
    const row = rows.get(f.path);
    if (!row || DEFAULT_ELSEWHERE.has(f.path)) continue;
    if (f.required) assert.equal(row.default, '(required)', `${f.path}: default`);
    else if (f.schema.default !== undefined) {
      const doc = bare(row.default);
      const want = bare(written(f.schema.default));
      if (doc.includes('…')) {
        const [head, tail] = doc.split('…');
        assert.ok(want.startsWith(head) && want.endsWith(tail), `${f.path}: default ${row.default}, schema ${want}`);
      } else assert.equal(doc, want, `${f.path}: default`);
    }
  }
});

test('every number of the schema has its unit, and docs/configuration.md writes it first', () => {
  const rows = documentedRows();
  for (const f of schemaFields(configSchema)) {
    if (f.schema.type === 'integer' || f.schema.type === 'number') assert.ok(f.schema.unit, `${f.path}: a unit in src/config/schema.ts`);
    const unit = rows.get(f.path)?.unit;
    if (f.schema.unit && unit !== undefined) assert.ok(unit.startsWith(f.schema.unit), `${f.path}: unit "${unit}", schema "${f.schema.unit}"`);
  }
});

test('docs/configuration.md writes every bound of the schema, as the schema has it', () => {
  const rows = documentedRows();
  let checked = 0;
  for (const f of schemaFields(configSchema)) {
    const unit = rows.get(f.path)?.unit ?? '';
    const min = f.schema.minimum ?? f.schema.minItems;
    const max = f.schema.maximum ?? f.schema.maxItems;
    const range = /(\d[\d,]*)\s*(?:–|to)\s*(\d[\d,]*)/.exec(unit);
    if (rows.has(f.path)) {
      if (min > 1) assert.ok(range || /≥ \d/.test(unit), `${f.path}: the minimum ${min} is not written ("${unit}")`);
      if (max !== undefined) assert.ok(range || /≤ \d/.test(unit), `${f.path}: the maximum ${max} is not written ("${unit}")`);
    }
    if (range) {
      assert.deepEqual([num(range[1]), num(range[2])], [min, max], `${f.path}: bounds "${unit}"`);
      checked++;
    }
    const atLeast = /≥ (\d[\d,]*)/.exec(unit);
    if (atLeast) {
      assert.equal(num(atLeast[1]), min, `${f.path}: minimum "${unit}"`);
      checked++;
    }
    const atMost = /≤ (\d[\d,]*)/.exec(unit);
    if (atMost) {
      assert.equal(num(atMost[1]), max, `${f.path}: maximum "${unit}"`);
      checked++;
    }
  }
  assert.ok(checked > 10, `bounds found in the doc: ${checked}`);
});

test("docs/configuration.md's table of default plans is the schema's default plans", () => {
  const md = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const lines = md.slice(md.indexOf('| id | cuPerSecond')).split('\n');
  const header = lines[0].slice(1, -1).split('|').map((c) => c.trim());
  const plans = configSchema.properties.plans.default as Record<string, Record<string, unknown>>;
  const seen: string[] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith('|')) break;
    const cells = line.slice(1, -1).split('|').map((c) => c.trim());
    const id = cells[0].replace(/`/g, '');
    seen.push(id);
    header.slice(1).forEach((column, i) => {
      const cell = cells[i + 1];
      const value = cell === 'yes' ? true : cell === 'no' ? false : /^10\^(\d+)$/.test(cell) ? 10 ** Number(cell.slice(3)) : num(cell);
      assert.equal(value, plans[id][column], `plan ${id}: ${column}`);
    });
    assert.deepEqual(header.slice(1).sort(), Object.keys(plans[id]).filter((k) => k !== 'name').sort(), `plan ${id}: the columns are its fields`);
  }
  assert.deepEqual(seen.sort(), Object.keys(plans).sort(), 'the same plans');
});
