// @ts-check
// Hash routes (`#/keys/<id>?x=y`): the path's parts matched against patterns with `:name` parameters.

/**
 * @typedef {object} Location
 * @property {string} path e.g. "/keys/abc"
 * @property {URLSearchParams} query
 */

/** The current hash as a path and query. @returns {Location} */
export function current() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, q = ''] = raw.split('?');
  return { path: path.startsWith('/') ? path : `/${path}`, query: new URLSearchParams(q) };
}

/**
 * The parameters of `path` when it matches `pattern` ("/keys/:id"), else undefined.
 * @param {string} pattern
 * @param {string} path
 * @returns {Record<string, string> | undefined}
 */
export function match(pattern, path) {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return undefined;
  /** @type {Record<string, string>} */
  const params = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return undefined;
  }
  return params;
}

/** Goes to `hash` ("#/keys"). @param {string} hash */
export const go = (hash) => { location.hash = hash; };
