/**
 * The API key is a path segment (spec: Authentication 1), so every URL that reaches a log goes through here.
 * Only the network segment is kept; anything after it is replaced.
 */
export function redactPath(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const parts = path.split('/');
  // /v1/{network}/{key}... or /{network}/{key}...
  const keyAt = parts[1] === 'v1' ? 3 : 2;
  if (parts.length > keyAt && !['healthz', 'readyz', 'metrics', 'api'].includes(parts[1])) {
    return parts.slice(0, keyAt).join('/') + '/[redacted]';
  }
  return path;
}

/**
 * An upstream (or database, Redis) URL as it may be shown to people: in the banner, logs, `/metrics` labels,
 * `/readyz`, `config check` and errors. Hosted nodes put their key anywhere in it: in the userinfo, in the query
 * string (`?apikey=KEY`), or as a path segment (Infura `/v3/KEY`, Alchemy `/v2/KEY`, QuickNode `/KEY/`, Ankr
 * `/eth/KEY`), so all three are hidden: userinfo and every query value become `***`, and so does every path
 * segment or host label that looks like a key (`looksLikeKey`). Scheme, host, port and the other segments stay,
 * so that an operator still tells two upstreams apart.
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '(invalid url)';
  }
  const user = u.username || u.password ? '***@' : '';
  // A host label only when it has no dash (rivet's `KEY.eth.rpc.rivet.cloud`; `eu-west-1-node-42` is a name).
  const host = u.hostname.split('.').map((l) => (!l.includes('-') && looksLikeKey(l) ? '***' : l)).join('.') + (u.port ? `:${u.port}` : '');
  const path = u.pathname.split('/').map((s) => (looksLikeKey(decodeSegment(s)) ? '***' : s)).join('/');
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join('&');
  return `${u.protocol}//${user}${host}${path}${query ? `?${query}` : u.search ? '?***' : ''}`;
}

/**
 * A key as providers issue them: 16 or more characters of letters, digits and `-_+=.~`, with both letters and
 * digits (Infura's 32 hex digits, Alchemy's base62, QuickNode's 40 hex digits, UUIDs), or 32 and more of any of
 * those. Words in a path (`v3`, `rpc`, `mainnet`, `eth-archive`) are shorter or have no digits: they stay.
 */
export function looksLikeKey(segment: string): boolean {
  if (!/^[A-Za-z0-9_\-+=.~]{16,}$/.test(segment)) return false;
  return segment.length >= 32 || (/[0-9]/.test(segment) && /[A-Za-z]/.test(segment));
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
