import { ConfigError } from './config-error.ts';
import type { UpstreamConfig } from './schema.ts';

/**
 * An upstream's configured headers with their values: a text as written, `{ env: NAME }` read from the environment.
 * A variable that is not set (or empty) is a configuration error naming the field and the variable, never a value.
 */
export function upstreamHeaders(headers: UpstreamConfig['headers'], field: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') {
      out[name] = value;
      continue;
    }
    const read = env[value.env];
    if (read === undefined || read === '') throw new ConfigError([`${field}.${name}: the environment variable ${value.env} is not set`]);
    out[name] = read;
  }
  return out;
}
