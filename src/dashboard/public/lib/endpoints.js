// @ts-check
// Endpoint URLs as users paste them: the network's HTTP(S) URL with the key at the end, and the same path as a
// WebSocket (wss:// behind TLS, ws:// otherwise). The last key made in this tab is remembered in memory only (never
// stored), so the overview can show complete URLs right after a key is created.
import { api } from './api.js';

/** @typedef {import('./types.js').Endpoint} Endpoint */

/** @type {{ value: string, name: string } | undefined} */
let lastKey;
/** @param {{ value: string, name: string }} k */
export const rememberKey = (k) => { lastKey = k; };
export const rememberedKey = () => lastKey;

/** What a URL's scheme is, as its label says it: "HTTPS" for https://, "HTTP" for http:// (a gateway without TLS). @param {string} url */
export const endpointLabel = (url) => (url.startsWith('https:') ? 'HTTPS' : 'HTTP');

/** @param {Endpoint} n @param {string} key */
export const httpUrl = (n, key) => `${n.url}${key}`;
/** @param {Endpoint} n @param {string} key */
export const wsUrl = (n, key) => `${n.url}${key}`.replace(/^http/, 'ws');

/** @type {Promise<Endpoint[]> | undefined} */
let networks;
/** The networks a member may call (cached for the tab's life). @returns {Promise<Endpoint[]>} */
export function loadNetworks() {
  networks ??= api('GET', '/networks').then((r) => /** @type {{ networks: Endpoint[] }} */ (r).networks);
  networks.catch(() => { networks = undefined; });
  return networks;
}
