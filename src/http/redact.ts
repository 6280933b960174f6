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

/** Hides user:password and query strings (often an API key of a hosted node) in a URL shown to people. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) { u.username = '***'; u.password = ''; }
    if (u.search) u.search = '?***';
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}
