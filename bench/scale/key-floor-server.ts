/**
 * The floor of keyed work in one Node.js process on this machine: `node:http` answering from memory, as bench/floor.ts
 * does, after finding the request's key (its path's last part) and counting the call on the key's and its account's
 * records (as a gateway counts usage and units per key and account). No store, no hash of the key's value, no limits,
 * no flush: the least a process that keeps a record per key must do, in one of three ways (the last argument):
 *   map    one `Map` from each value to an object, which points to its account's object
 *   table  no object per key: an open-addressing table of slots in an Int32Array, the values' bytes side by side in
 *          one Uint8Array, the counts in Float64Arrays by key and by account (a lookup hashes the value, reads its slot,
 *          compares the value's bytes, then adds to two counts)
 *   none   every request counted on one key, whatever its path: the control (what the draw of the path costs)
 *   node bench/scale/key-floor-server.ts SALT KEYS ACCOUNTS MODE   → prints "key floor listening on PORT" once the keys are in
 */
import { createServer } from 'node:http';

const [salt, keys, accounts, mode] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), process.argv[5]];
const ANSWER = Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
const REFUSED = Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"invalid key"}}');
const HEADERS = { 'content-type': 'application/json', 'content-length': ANSWER.length };
const valueOf = (j: number) => `ngk_${salt}${String(j).padStart(7, '0')}`;

interface AccountRecord { id: string; units: number; requests: number }
interface KeyRecord { id: string; account: AccountRecord; revoked: boolean; requests: number; units: number }

/** Counts the call of the key whose value is `value`: false when no key has it. */
let count: (value: string) => boolean;

if (mode === 'table') {
  const WIDTH = valueOf(0).length;
  const size = 1 << Math.ceil(Math.log2(keys * 2));
  const slots = new Int32Array(size).fill(-1);
  const bytes = new Uint8Array(keys * WIDTH);
  const accountOf = new Int32Array(keys);
  const keyRequests = new Float64Array(keys);
  const keyUnits = new Float64Array(keys);
  const accountRequests = new Float64Array(accounts);
  const accountUnits = new Float64Array(accounts);
  // FNV-1a over the value's characters (the values are ASCII).
  const hash = (s: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  };
  for (let j = 0; j < keys; j++) {
    const v = valueOf(j);
    for (let i = 0; i < WIDTH; i++) bytes[j * WIDTH + i] = v.charCodeAt(i);
    accountOf[j] = j % accounts;
    let s = hash(v) & (size - 1);
    while (slots[s] !== -1) s = (s + 1) & (size - 1);
    slots[s] = j;
  }
  const find = (v: string) => {
    if (v.length !== WIDTH) return -1;
    for (let s = hash(v) & (size - 1); ; s = (s + 1) & (size - 1)) {
      const j = slots[s];
      if (j === -1) return -1;
      let i = 0;
      const at = j * WIDTH;
      while (i < WIDTH && bytes[at + i] === v.charCodeAt(i)) i++;
      if (i === WIDTH) return j;
    }
  };
  count = (v) => {
    const j = find(v);
    if (j < 0) return false;
    keyRequests[j]++;
    keyUnits[j] += 10;
    const a = accountOf[j];
    accountRequests[a]++;
    accountUnits[a] += 10;
    return true;
  };
} else {
  const accountRecords: AccountRecord[] = Array.from({ length: accounts }, (_, i) => ({ id: `acct${i}`, units: 0, requests: 0 }));
  const byValue = new Map<string, KeyRecord>();
  for (let j = 0; j < keys; j++) byValue.set(valueOf(j), { id: `key${j}`, account: accountRecords[j % accounts], revoked: false, requests: 0, units: 0 });
  const one = valueOf(1);
  count = (v) => {
    const k = byValue.get(mode === 'none' ? one : v);
    if (k === undefined || k.revoked) return false;
    k.requests++;
    k.units += 10;
    k.account.requests++;
    k.account.units += 10;
    return true;
  };
}

const server = createServer((req, res) => {
  const url = req.url!;
  const known = count(url.slice(url.lastIndexOf('/') + 1));
  req.on('data', () => {});
  req.on('end', () => {
    if (!known) return void res.writeHead(401, { 'content-type': 'application/json', 'content-length': REFUSED.length }).end(REFUSED);
    res.writeHead(200, HEADERS).end(ANSWER);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`key floor listening on ${(server.address() as { port: number }).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
