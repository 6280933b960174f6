import type { Socket } from 'node:net';

/**
 * The endpoint's paths (docs/decisions.md §2): `/v1/{network}/{apikey}`, `/{network}/{apikey}`, `/v1/{network}` and
 * `/v1/{network}/` (a key-less call, answered 401). HTTP POSTs them, a WebSocket upgrades a GET of them.
 */
export const RPC_URLS = ['/v1/:network/:apikey', '/:network/:apikey', '/v1/:network', '/v1/:network/'] as const;

/** fastify's longest path parameter (its maxParamLength): a longer segment is its router's error, not a network. */
const MAX_SEGMENT = 100;

/**
 * The network and key of an RPC path read without the router, for the plain cases: undefined when the
 * path is not plainly one of RPC_URLS (an encoded or empty segment, an over-long one, a first segment that a static
 * route also starts with), which then goes through fastify's router as before and is answered the same way.
 * `staticFirst`: the first segments of every other route (`api`, `dashboard`, `healthz`...).
 */
export function plainRpcPath(url: string, staticFirst: ReadonlySet<string>): { network: string; apikey: string | undefined } | undefined {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.charCodeAt(0) !== 47 /* / */ || path.includes('%')) return undefined;
  const a = path.indexOf('/', 1);
  if (a === -1) return undefined;
  const first = path.slice(1, a);
  const b = path.indexOf('/', a + 1);
  const second = path.slice(a + 1, b === -1 ? undefined : b);
  if (first === 'v1') {
    if (b === -1) return segment(second) ? { network: second, apikey: undefined } : undefined; // /v1/{network}
    const third = path.slice(b + 1);
    if (third === '') return segment(second) ? { network: second, apikey: undefined } : undefined; // /v1/{network}/
    if (third.includes('/') || !segment(second) || !segment(third)) return undefined;
    return { network: second, apikey: third };
  }
  if (b !== -1 || staticFirst.has(first) || !segment(first) || !segment(second)) return undefined;
  return { network: first, apikey: second };
}

const segment = (s: string) => s.length > 0 && s.length <= MAX_SEGMENT;

const lastUrl = Symbol('the URL of the connection\'s last request');
const lastPath = Symbol('what plainRpcPath read of it');
type Remembering = Socket & { [lastUrl]?: string; [lastPath]?: ReturnType<typeof plainRpcPath> };

/**
 * plainRpcPath of a request, remembered per connection: a client on a keep-alive connection sends every call to the
 * same URL. Then the path is not read again, and the network's and key's names are the same strings as before,
 * whose hashes V8 keeps: the lookups that follow (the network, the key's cache) hash nothing.
 */
export function plainRpcPathOf(socket: Socket, url: string, staticFirst: ReadonlySet<string>): ReturnType<typeof plainRpcPath> {
  const s = socket as Remembering;
  if (s[lastUrl] === url) return s[lastPath];
  const path = plainRpcPath(url, staticFirst);
  s[lastUrl] = url;
  s[lastPath] = path;
  return path;
}
