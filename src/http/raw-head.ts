import { STATUS_CODES, type ServerResponse } from 'node:http';

/**
 * The fields of node's ServerResponse that `ServerResponse.writeHead` → `_storeHeader` reads and sets to write a
 * response's head (node 20 and 22: lib/_http_outgoing.js). `_header` is the head's text, written in front of the body
 * by `end()`; `headersSent` is `!!_header`.
 */
interface Internals {
  _header: string | null;
  _headerSent: boolean;
  _last: boolean;
  _expect_continue?: boolean;
  _keepAliveTimeout?: number;
  _maxRequestsPerSocket?: number;
  _defaultKeepAlive?: boolean;
  shouldKeepAlive: boolean;
  maxRequestsOnConnectionReached?: boolean;
  sendDate: boolean;
  statusCode: number;
  statusMessage: string;
}

/** Header values are the gateway's own or were checked by node's parser; this rules out a line break all the same. */
const UNSAFE = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Writes a response's head as one string made by the caller, not by `writeHead`. writeHead checks each
 * of a JSON-RPC answer's ten headers against two regular expressions, lower-cases its name and concatenates it:
 * measured on the floor (bench/floor.ts), the headers the spec asks for cost 15-20 % of its rate that way, and a head
 * built as one template here cost nothing measurable. `lines` is `name: value\r\n` for each header, whose names are
 * the gateway's constants; what node adds itself is added as node does: `Date` (once a second), and `Connection`
 * with `Keep-Alive` from the response's own state (closing when the server stops, after maxRequestsPerSocket, or
 * when the client does not keep alive), so the connection's life is node's to manage as before.
 *
 * false when the response is not in the state this knows (a node whose internals differ, `Expect: 100-continue`,
 * a value with a control character): the caller then uses writeHead.
 */
export function writeRawHead(res: ServerResponse, status: number, lines: string, close: boolean, dynamic: string | undefined): boolean {
  const r = res as unknown as Internals;
  if (r._header !== null || r._expect_continue !== false || r._defaultKeepAlive !== true || typeof r._keepAliveTimeout !== 'number') return false;
  if (dynamic !== undefined && UNSAFE.test(dynamic)) return false;
  let connection: string;
  if (close || !r.shouldKeepAlive) {
    connection = 'Connection: close\r\n\r\n';
    r._last = true;
  } else if (r.maxRequestsOnConnectionReached === true) {
    connection = 'Connection: close\r\n\r\n'; // as node: said, and the client closes
  } else {
    connection = keepAliveLines(r._keepAliveTimeout, r._maxRequestsPerSocket ?? 0);
  }
  const message = STATUS_CODES[status] ?? 'unknown';
  r.statusCode = status;
  r.statusMessage = message;
  r._header = `HTTP/1.1 ${status} ${message}\r\n${lines}${r.sendDate ? dateLine() : ''}${connection}`;
  r._headerSent = false;
  return true;
}

let keepAlive = '';
let keepAliveMs = -1;
let keepAliveMax = -1;
/** `Connection: keep-alive` and `Keep-Alive: timeout=…`, as node writes them (made once per setting). */
function keepAliveLines(timeoutMs: number, maxRequests: number): string {
  if (timeoutMs !== keepAliveMs || maxRequests !== keepAliveMax) {
    keepAliveMs = timeoutMs;
    keepAliveMax = maxRequests;
    keepAlive = 'Connection: keep-alive\r\n'
      + (timeoutMs ? `Keep-Alive: timeout=${Math.floor(timeoutMs / 1000)}${~~maxRequests > 0 ? `, max=${maxRequests}` : ''}\r\n` : '')
      + '\r\n';
  }
  return keepAlive;
}

let dateSecond = -1;
let date = '';
/** The `Date` line, made again when the second changes (node caches its own the same way). */
function dateLine(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    date = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
  }
  return date;
}
