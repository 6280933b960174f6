import { ValidationError } from '../accounts/errors.ts';
import type { Values } from './command.ts';
import { UsageError } from './errors.ts';

/** Helpers that turn flag values into service inputs; errors name the flag (`--cu-per-second: ...`). */

export function str(v: Values, flag: string): string | undefined {
  const x = v[flag];
  return typeof x === 'string' ? x : undefined;
}

export function required(v: Values, flag: string, what: string): string {
  const x = str(v, flag);
  if (x === undefined) throw new UsageError(`--${flag}: required (${what})`);
  return x;
}

/** A non-negative integer flag within bounds, or undefined when absent. */
export function integer(v: Values, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const x = str(v, flag);
  if (x === undefined) return undefined;
  const n = /^\d+$/.test(x.replaceAll('_', '')) ? Number(x.replaceAll('_', '')) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${flag}: must be an integer${max === Number.MAX_SAFE_INTEGER ? ` of at least ${min}` : ` from ${min} to ${max}`}, not ${JSON.stringify(x)}`);
  }
  return n;
}

/** A comma-separated list flag; `--ip ''` is the empty list (no restriction). */
export function list(v: Values, flag: string): string[] | undefined {
  const x = str(v, flag);
  return x === undefined ? undefined : x.split(',').map((s) => s.trim()).filter(Boolean);
}

/** One of `choices`, compared case-insensitively and answered in its canonical spelling. */
export function oneOf<T extends string>(v: Values, flag: string, choices: readonly T[]): T | undefined {
  const x = str(v, flag);
  if (x === undefined) return undefined;
  const found = choices.find((c) => c.toLowerCase() === x.toLowerCase());
  if (!found) throw new UsageError(`--${flag}: one of ${choices.join(', ')}, not ${JSON.stringify(x)}`);
  return found;
}

/** A flag and its `--no-` form: true, false, or undefined when neither is given. */
export function toggle(v: Values, flag: string): boolean | undefined {
  if (v[flag] && v[`no-${flag}`]) throw new UsageError(`--${flag} and --no-${flag}: give one`);
  return v[flag] ? true : v[`no-${flag}`] ? false : undefined;
}

export function nonEmpty(field: string, x: string | undefined): string | undefined {
  if (x !== undefined && !x.trim()) throw new ValidationError(field, 'must not be empty');
  return x?.trim();
}

/** Refuses an update that would change nothing. */
export function someChange(patch: object, flags: string): void {
  if (Object.values(patch).every((x) => x === undefined)) throw new UsageError(`nothing to change: give at least one of ${flags}`);
}

/** A duration flag (`90`, `90s`, `15m`, `2h`, `1d`; a bare number is seconds) in ms, at most `maxMs`; undefined when absent. */
export function duration(v: Values, flag: string, maxMs: number): number | undefined {
  const x = str(v, flag);
  if (x === undefined) return undefined;
  const m = /^(\d+)(s|m|h|d)?$/.exec(x.trim());
  const ms = m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 's') as 's'] : NaN;
  if (!Number.isSafeInteger(ms) || ms > maxMs) throw new UsageError(`--${flag}: a duration such as 60s, 15m or 2h, at most ${maxMs / 3_600_000} h, not ${JSON.stringify(x)}`);
  return ms;
}
