import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config/schema.ts';
import { UsageError } from './errors.ts';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

/** What a command printed: `text` by default, `json` with `--json`. */
export interface Output {
  text: string;
  json: unknown;
}

/** One subcommand: its usage, flags and positional arguments (all required), and what it does. */
export interface Subcommand {
  /** After `nodegate GROUP`, e.g. `show ID|EMAIL [--json]`. */
  usage: string;
  summary: string;
  options?: Options;
  args?: string[];
  /** An Output to print, or an exit status (for `start`, which prints as it goes). */
  run(config: Readonly<Config>, values: Values, args: string[]): Promise<Output | number>;
}

export const COMMON: Options = {
  config: { type: 'string', short: 'c' },
  help: { type: 'boolean', short: 'h' },
  /** Management commands: create a new store even though a gateway answers on the configured port (store-guard.ts). */
  'new-store': { type: 'boolean' },
};
export const JSON_FLAG: Options = { json: { type: 'boolean' } };

/** The first word of `argv` that is neither a flag nor `--config`'s value, and `argv` without it. */
export function takeWord(argv: string[]): [string | undefined, string[]] {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--config' || a === '-c') i++;
    else if (a === '--') return [argv[i + 1], [...argv.slice(0, i), ...argv.slice(i + 2)]];
    else if (!a.startsWith('-')) return [a, [...argv.slice(0, i), ...argv.slice(i + 1)]];
  }
  return [undefined, argv];
}

/** The usage lines of a group, one per subcommand. */
export function groupUsage(group: string, table: Record<string, Subcommand>): string {
  return Object.values(table).map((s) => `  nodegate ${group} ${s.usage}\n      ${s.summary}`).join('\n');
}

/**
 * Runs `nodegate GROUP SUB ...`: picks the subcommand, parses its flags strictly (unknown flags are usage
 * errors), loads the configuration (`--config FILE` or NODEGATE_CONFIG, then the environment), and prints
 * what it returns.
 */
export async function runGroup(group: string, table: Record<string, Subcommand>, argv: string[]): Promise<number> {
  const [sub, rest] = takeWord(argv);
  if (!sub) {
    if (rest.includes('--help') || rest.includes('-h')) return print(`usage:\n${groupUsage(group, table)}`), 0;
    throw new UsageError(`${group}: which one?`, groupUsage(group, table));
  }
  const spec = Object.hasOwn(table, sub) ? table[sub] : undefined;
  if (!spec) throw new UsageError(`unknown command: ${group} ${sub}`, groupUsage(group, table));
  return runCommand(`${group} ${sub}`, `  nodegate ${group} ${spec.usage}`, spec, rest);
}

/** Runs one command's flags and arguments (`name` as in messages, e.g. `keys create`). */
export async function runCommand(name: string, usage: string, spec: Subcommand, argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON, ...spec.options }, usage);
  if (values.help) return print(`usage:\n${usage}\n      ${spec.summary}`), 0;
  const names = spec.args ?? [];
  if (positionals.length < names.length) throw new UsageError(`${name}: missing ${names[positionals.length]}`, usage);
  if (positionals.length > names.length) throw new UsageError(`${name}: unexpected argument ${positionals[names.length]}`, usage);
  // Loaded here, not at the top: `--help` and usage errors answer without the configuration's validator.
  const { loadConfig } = await import('../config/load.ts');
  const config = loadConfig(values.config as string | undefined);
  const out = await spec.run(config, values as Values, positionals);
  if (typeof out === 'number') return out;
  print(values.json ? JSON.stringify(out.json, null, 2) : out.text);
  return 0;
}

/** parseArgs, strictly; its complaints become usage errors (exit 2), cut to their first sentence. */
function parse(args: string[], options: Options, usage: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    if (!(err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw err;
    throw new UsageError((err as Error).message.replace(/\. To specify a positional.*$/s, ''), usage);
  }
}

function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}
