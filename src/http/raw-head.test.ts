import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { writeRawHead } from './raw-head.ts';

const BODY = '{"jsonrpc":"2.0","id":1,"result":"0x1"}';
const HEADERS = ['x-request-id', 'abc', 'access-control-allow-origin', '*', 'content-type', 'application/json; charset=utf-8', 'content-length', String(BODY.length)];
const LINES = 'x-request-id: abc\r\naccess-control-allow-origin: *\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ' + BODY.length + '\r\n';

/** What each request asked for (`/raw`, `/raw-close`, `/raw-unsafe` or node's own writeHead) and whether the head was made whole. */
const made: boolean[] = [];
let server: Server;
let port = 0;

before(async () => {
  server = createServer((req, res) => {
    let ok = false;
    if (req.url!.startsWith('/raw')) {
      ok = writeRawHead(res, 200, LINES, req.url === '/raw-close', req.url === '/raw-unsafe' ? 'a\u0001b' : undefined);
      made.push(ok);
    }
    if (!ok) res.writeHead(200, HEADERS);
    res.end(BODY);
  });
  server.keepAliveTimeout = 7_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));

/** Sends `requests` in one write on one connection; resolves with everything read until the server closes it or `ms` passes. */
function exchange(requests: string, ms = 1_500): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    const t = setTimeout(() => { s.destroy(); resolve({ text, closed: false }); }, ms);
    s.setEncoding('latin1').on('data', (d: string) => { text += d; });
    s.on('end', () => { clearTimeout(t); s.destroy(); resolve({ text, closed: true }); });
    s.on('error', reject);
    s.write(requests);
  });
}

const post = (path: string, extra = '') => `POST ${path} HTTP/1.1\r\nHost: x\r\ncontent-length: 2\r\n${extra}\r\n{}`;
/** The responses' heads and bodies, the Date line left out (the two may fall in different seconds). */
const withoutDate = (text: string) => text.replace(/\r\nDate: [^\r]*/g, '');

describe('a response head made whole (raw-head.ts)', () => {
  // writeRawHead falls back to writeHead when node's private fields are not as it knows them, and the bytes would
  // still be right: this is the test that fails when a node version `engines` allows changes them.
  it("finds node's private ServerResponse fields as it knows them, and makes the head itself", async () => {
    made.length = 0;
    const raw = await exchange(post('/raw') + post('/raw', 'connection: close\r\n'));
    assert.equal(raw.text.split(BODY).length, 3, 'both requests answered');
    assert.deepEqual(made, [true, true], `node ${process.version}: writeRawHead fell back to writeHead`);
  });

  it('writes the same bytes as writeHead, and keeps the connection open for the next request', async () => {
    const raw = await exchange(post('/raw') + post('/raw'), 300);
    const node = await exchange(post('/node') + post('/node'), 300);
    assert.equal(raw.closed, false);
    assert.equal(withoutDate(raw.text), withoutDate(node.text));
    assert.match(raw.text, /^HTTP\/1\.1 200 OK\r\nx-request-id: abc\r\n/);
    assert.match(raw.text, /\r\nDate: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=7\r\n\r\n/);
    assert.equal(raw.text.split(BODY).length, 3, 'both requests answered');
  });

  it('closes the connection as writeHead does when the client asks, and when the caller says so', async () => {
    const asked = await exchange(post('/raw', 'connection: close\r\n'));
    const node = await exchange(post('/node', 'connection: close\r\n'));
    assert.equal(asked.closed, true);
    assert.equal(withoutDate(asked.text), withoutDate(node.text));
    assert.match(asked.text, /\r\nConnection: close\r\n\r\n/);
    const told = await exchange(post('/raw-close') + post('/raw'));
    assert.equal(told.closed, true);
    assert.equal(told.text.split(BODY).length, 2, 'the pipelined second request is not answered on a closing connection');
  });

  it('answers HTTP/1.0 clients as writeHead does, with and without keep-alive', async () => {
    const old = (path: string, extra = '') => post(path, extra).replace('HTTP/1.1', 'HTTP/1.0');
    for (const extra of ['', 'connection: keep-alive\r\n']) {
      const raw = await exchange(old('/raw', extra), 300);
      const node = await exchange(old('/node', extra), 300);
      assert.equal(raw.closed, node.closed, extra);
      assert.equal(withoutDate(raw.text), withoutDate(node.text));
    }
  });

  it('says Connection: close after maxRequestsPerSocket as writeHead does', async () => {
    server.maxRequestsPerSocket = 2;
    try {
      const raw = await exchange(post('/raw') + post('/raw'), 300);
      const node = await exchange(post('/node') + post('/node'), 300);
      assert.equal(withoutDate(raw.text), withoutDate(node.text));
      assert.match(raw.text, /Keep-Alive: timeout=7, max=2\r\n/);
      assert.match(raw.text.slice(raw.text.lastIndexOf('HTTP/1.1')), /\r\nConnection: close\r\n\r\n/);
    } finally {
      server.maxRequestsPerSocket = 0;
    }
  });

  it('leaves the head to writeHead for Expect: 100-continue and for a value with a control character', async () => {
    made.length = 0;
    const expect = await exchange(post('/raw', 'expect: 100-continue\r\n'), 300);
    assert.match(expect.text, /200 OK/);
    await exchange(post('/raw-unsafe'), 300);
    assert.deepEqual(made, [false, false]);
  });
});
