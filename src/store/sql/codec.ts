import type { Big, Bool, Json, List, Time } from './tables.ts';

/**
 * How one dialect keeps the values whose column types differ (`sql/tables.ts`): written with `to*`, read back with the
 * others. Times are kept in one form (`toISOString`), so they compare as strings and read back identically.
 */
export interface Codec {
  bool(v: Bool): boolean;
  list(v: List): string[];
  time(v: Time): string;
  /** `pg` answers int8 as a string; quotas and usage stay far below 2^53. */
  big(v: Big): number;
  json<T>(v: Json): T;
  toBool(b: boolean): Bool;
  toList(list: readonly string[]): List;
  toJson(value: unknown): Json;
}

export const sqliteCodec: Codec = {
  bool: (v) => v === 1 || v === true,
  list: (v) => JSON.parse(v as string) as string[],
  time: (v) => v as string,
  big: (v) => Number(v),
  json: <T>(v: Json) => JSON.parse(v as string) as T,
  toBool: (b) => (b ? 1 : 0),
  toList: (list) => JSON.stringify(list),
  toJson: (value) => JSON.stringify(value),
};

export const postgresCodec: Codec = {
  bool: (v) => v === true,
  list: (v) => v as string[],
  time: (v) => (v instanceof Date ? v : new Date(v)).toISOString(),
  big: (v) => Number(v),
  json: <T>(v: Json) => (typeof v === 'string' ? JSON.parse(v) : v) as T,
  toBool: (b) => b,
  toList: (list) => [...list],
  toJson: (value) => JSON.stringify(value),
};

/** A time as the store keeps it: ISO 8601 in UTC, whatever form it was given in. */
export const isoTime = (value: string): string => new Date(value).toISOString();

/** A nullable time column, read. */
export const timeOrNull = (codec: Codec, v: Time | null | undefined): string | null => (v === null || v === undefined ? null : codec.time(v));
