// @ts-check
// The domain facts (permissions, key types, roles, webhook kinds, plan limits, error codes), read once from the
// gateway (/dashboard/facts.json, made from the server's own modules): the page declares none of its own.

/** @typedef {import('./types.js').Facts} Facts */

/** @type {Promise<Facts> | undefined} */
let loading;

/** @returns {Promise<Facts>} */
export function loadFacts() {
  loading ??= fetch('/dashboard/facts.json', { credentials: 'same-origin' }).then((r) => {
    if (!r.ok) throw new Error(`the dashboard's facts could not be loaded (HTTP ${r.status})`);
    return r.json();
  });
  return loading;
}

/**
 * What an error code of the usage means, from the catalogue ("0": success).
 * @param {Facts} facts
 * @param {number} code
 */
export function meaningOf(facts, code) {
  if (code === 0) return 'success';
  const c = facts.errorCodes.find((e) => e.code === code);
  if (c) return c.meaning;
  if (code >= 400 && code < 600) return `HTTP ${code}`;
  return "the node's own error (passed through as the node answered)";
}

/** "Compute units per second (per account)": a label as a heading. @param {string} s */
export const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);
