import { readFileSync } from 'node:fs';

/**
 * The allowed methods (docs/decisions.md §4): the spec's 48 names plus `eth_chainId`, 49 in all. Kept as data so
 * the vendoring script and the code read the same list.
 */
export const ALLOWED_METHODS: readonly string[] = JSON.parse(readFileSync(new URL('./allowed.json', import.meta.url), 'utf8'));
