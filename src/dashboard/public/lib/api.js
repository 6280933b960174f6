// @ts-check
// The management API client: JSON to and from /api/v1 with the session cookie, the session's CSRF token on every
// change, and failures as ApiFailure (status, code, the field the server named, its message).

/** The session's CSRF token; set by login and by GET /session. */
let csrf = '';
/** @param {string} token */
export const setCsrf = (token) => { csrf = token; };

/** Called when the session ends under the page (a 401 on a route that needs one). @type {() => void} */
let onSignedOut = () => {};
/** @param {() => void} fn */
export const whenSignedOut = (fn) => { onSignedOut = fn; };

export class ApiFailure extends Error {
  /**
   * @param {number} status
   * @param {{ error?: { code?: string, message?: string, field?: string } } | undefined} body
   */
  constructor(status, body) {
    super(body?.error?.message ?? (status === 0 ? 'The gateway could not be reached; check the connection and try again.' : `The gateway answered HTTP ${status}.`));
    this.status = status;
    this.code = body?.error?.code ?? '';
    this.field = body?.error?.field;
  }

  /** A route this server does not have yet (one not deployed on it): 404 with the API's not_found of a route. */
  get missingRoute() {
    return this.status === 404 && this.message.startsWith('no route');
  }
}

/** The routes that do not need a session: a 401 there is an answer (wrong password), not a logout. */
const PUBLIC = /^\/(session|signup|password-reset|invitations\/(accept|preview))(\/|$|\?)/;

/**
 * @template T
 * @param {'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} method
 * @param {string} path under /api/v1
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    if (csrf) headers['x-csrf-token'] = csrf;
  }
  let res;
  try {
    res = await fetch(`/api/v1${path}`, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiFailure(0, undefined);
  }
  const text = await res.text();
  /** @type {any} */
  let data;
  try { data = text ? JSON.parse(text) : undefined; } catch { data = undefined; }
  if (!res.ok) {
    const failure = new ApiFailure(res.status, data);
    if (res.status === 401 && !PUBLIC.test(path)) onSignedOut();
    throw failure;
  }
  return data;
}

/** A query string of the defined values. @param {Record<string, string | number | undefined | null>} q */
export function query(q) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
