/**
 * `value` as JSON, cut to `max` characters (with `…` at the cut): the writer stops once it has `max`, so a megabyte
 * of params costs what its first `max` characters cost, not a JSON.stringify of the whole. Strings longer than
 * `max` are cut before they are quoted.
 */
export function clippedJson(value: unknown, max: number): string {
  const out: Out = { text: '', max };
  write(value, out);
  return out.text.length > max ? out.text.slice(0, max) + '…' : out.text;
}

interface Out { text: string; max: number }

function write(v: unknown, o: Out): void {
  if (o.text.length > o.max) return;
  if (v === null || v === undefined) { o.text += 'null'; return; }
  switch (typeof v) {
    case 'string': o.text += JSON.stringify(v.length > o.max ? v.slice(0, o.max) : v); return;
    case 'number': case 'boolean': o.text += String(v); return;
    case 'bigint': o.text += v.toString(); return;
    case 'object': break;
    default: o.text += 'null'; return;
  }
  if (Array.isArray(v)) {
    o.text += '[';
    for (let i = 0; i < v.length && o.text.length <= o.max; i++) {
      if (i > 0) o.text += ',';
      write(v[i], o);
    }
    o.text += ']';
    return;
  }
  o.text += '{';
  let first = true;
  for (const k in v as Record<string, unknown>) {
    if (o.text.length > o.max) break;
    if (!first) o.text += ',';
    first = false;
    o.text += JSON.stringify(k) + ':';
    write((v as Record<string, unknown>)[k], o);
  }
  o.text += '}';
}

/**
 * Whether `value`'s JSON is about `max` characters or fewer (strings counted without their escapes), found by a walk
 * that stops as soon as it is not, and makes nothing: the request path asks this, and a small value is serialised
 * later, off it (JSON.stringify at the flush), and cut there if its escapes made it longer.
 */
export function jsonWithin(value: unknown, max: number): boolean {
  return left(value, max) >= 0;
}

function left(v: unknown, budget: number): number {
  if (budget < 0) return budget;
  switch (typeof v) {
    case 'string': return budget - v.length - 2;
    case 'number': case 'bigint': return budget - 20;
    case 'boolean': return budget - 5;
    case 'object': break;
    default: return budget - 4;
  }
  if (v === null) return budget - 4;
  budget -= 2;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && budget >= 0; i++) budget = left(v[i], budget - 1);
    return budget;
  }
  for (const k in v as Record<string, unknown>) {
    if (budget < 0) break;
    budget = left((v as Record<string, unknown>)[k], budget - k.length - 4);
  }
  return budget;
}
