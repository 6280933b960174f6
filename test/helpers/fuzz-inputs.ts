import fc from 'fast-check';

/**
 * Inputs for test/e2e/fuzz.test.ts: valid calls of every allowed method, mutations of them, and the hostile
 * values a JSON-RPC endpoint meets (numbers no double holds, nesting too deep to build as objects, long strings,
 * invalid UTF-8). Values that JavaScript cannot hold are written into the body as raw bytes (`Raw`).
 */
export class Raw {
  constructor(readonly bytes: Buffer) {}
}
const raw = (s: string | Buffer) => new Raw(typeof s === 'string' ? Buffer.from(s) : s);

type Call = Record<string, unknown>;

/** JSON text of `v` with every `Raw` written as its bytes (which may make the text invalid JSON or UTF-8). */
export function serialize(v: unknown): Buffer {
  const raws: Buffer[] = [];
  const text = JSON.stringify(v, (_k, x) => (x instanceof Raw ? `\u0000RAW${raws.push(x.bytes) - 1}` : x)) ?? 'null';
  if (raws.length === 0) return Buffer.from(text);
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of text.matchAll(/"\\u0000RAW(\d+)"/g)) {
    parts.push(Buffer.from(text.slice(last, m.index)), raws[Number(m[1])]);
    last = m.index! + m[0].length;
  }
  parts.push(Buffer.from(text.slice(last)));
  return Buffer.concat(parts);
}

/** `inner` wrapped in `depth` arrays or objects, as text: a 10,000-level value is never built as an object. */
export function nested(depth: number, kind: 'array' | 'object', inner: Buffer = Buffer.from('0')): Raw {
  const [open, close] = kind === 'array' ? ['[', ']'] : ['{"a":', '}'];
  return raw(Buffer.concat([Buffer.from(open.repeat(depth)), inner, Buffer.from(close.repeat(depth))]));
}

/** Numbers beyond a double (1e400 parses to Infinity), beyond 2^53, denormal, negative zero. */
export const HUGE_NUMBERS = ['1e400', '-1e400', '123456789012345678901234567890', '9007199254740993', '1e-400', '-0', '1.7976931348623157e309', '0e0'];

/** Bytes that are not UTF-8: a lone continuation, an overlong '/', a UTF-16 surrogate, a cut sequence, 0xff. */
export const INVALID_UTF8 = [[0xff], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe, 0xfe, 0xff]];

/** Values of every JSON type, shapes that look almost right, and nothing at all (null). */
export const WRONG_VALUES: unknown[] = [
  null, 0, -1, 1.5, 2 ** 53, true, false, '', 'latest', 'pending', '0x', '0x0', '0x00', '0xzz', '0x-1', '1', 'xyz',
  '0x' + 'f'.repeat(130), 'x'.repeat(5_000), '\u0000', '\ud800', {}, [], [null], [[]], { a: 1 }, { blockHash: '0x1' },
  raw('1e400'), raw('123456789012345678901234567890'), nested(129, 'array'), nested(10_000, 'object'),
  raw(Buffer.from([0x22, 0xc0, 0xaf, 0x22])),
];

const longString = fc.tuple(fc.integer({ min: 1_000, max: 200_000 }), fc.constantFrom('a', 'f', 'é', '😀', '\\', '"'))
  .map(([n, ch]) => (ch === 'f' ? '0x' + 'f'.repeat(n) : ch.repeat(n)));
const depth = fc.oneof(fc.integer({ min: 1, max: 300 }), fc.constantFrom(127, 128, 129, 1_000, 10_000));
const invalidUtf8String = fc.oneof(fc.constantFrom(...INVALID_UTF8), fc.uint8Array({ minLength: 1, maxLength: 8 }).map((a) => [...a]))
  .map((bytes) => raw(Buffer.concat([Buffer.from('"ab'), Buffer.from(bytes), Buffer.from('cd"')])));

/** Any value a parameter, an id or a member may be given. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: fc.constantFrom(...WRONG_VALUES) },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE_NUMBERS).map(raw) },
  { weight: 1, arbitrary: fc.tuple(depth, fc.constantFrom('array', 'object') as fc.Arbitrary<'array' | 'object'>).map(([d, k]) => nested(d, k)) },
  { weight: 1, arbitrary: longString },
  { weight: 1, arbitrary: invalidUtf8String },
);

const params = (c: Call): unknown[] | undefined => (Array.isArray(c.params) ? c.params : undefined);
/** Sets an own member, `__proto__` included (a spread would set the prototype instead). */
function withMember(c: Call, k: string, v: unknown): Call {
  const out = { ...c };
  Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}
function without(c: Call, k: string): Call {
  const out = { ...c };
  delete out[k];
  return out;
}
function editParams(c: Call, f: (ps: unknown[]) => unknown[]): Call {
  const ps = params(c);
  return ps ? { ...c, params: f([...ps]) } : c;
}
function editObjectParam(c: Call, i: number, f: (o: Record<string, unknown>) => Record<string, unknown>): Call {
  return editParams(c, (ps) => {
    const j = ps.findIndex((p, n) => n >= i % Math.max(1, ps.length) && p !== null && typeof p === 'object' && !Array.isArray(p) && !(p instanceof Raw));
    if (j >= 0) ps[j] = f({ ...(ps[j] as Record<string, unknown>) });
    return ps;
  });
}

/** Methods the random calls may switch to: never the two that change the chain. */
export const callableMethods = (allowed: readonly string[]) => allowed.filter((m) => m !== 'eth_sendTransaction' && m !== 'eth_sendRawTransaction');

/** One change to a request object. */
export function mutation(methods: string[]): fc.Arbitrary<(c: Call) => Call> {
  return fc.oneof(
    fc.tuple(fc.nat(4), anyValue).map(([i, v]) => (c: Call) => editParams(c, (ps) => { ps[i % (ps.length + 1)] = v; return ps; })),
    fc.nat(4).map((i) => (c: Call) => editParams(c, (ps) => ps.filter((_, j) => j !== i % Math.max(1, ps.length)))),
    anyValue.map((v) => (c: Call) => editParams(c, (ps) => [...ps, v])),
    anyValue.map((v) => (c: Call) => ({ ...c, params: v })),
    fc.constant((c: Call) => without(c, 'params')),
    anyValue.map((v) => (c: Call) => ({ ...c, id: v })),
    fc.constant((c: Call) => without(c, 'id')),
    anyValue.map((v) => (c: Call) => ({ ...c, jsonrpc: v })),
    fc.constant((c: Call) => without(c, 'jsonrpc')),
    fc.oneof(anyValue, fc.constantFrom(...methods)).map((v) => (c: Call) => ({ ...c, method: v })),
    fc.tuple(fc.constantFrom('upper', 'prefix', 'suffix'), fc.string({ maxLength: 3 })).map(([how, s]) => (c: Call) => {
      const m = String(c.method);
      return { ...c, method: how === 'upper' ? m.toUpperCase() : how === 'prefix' ? s + m : m + s };
    }),
    fc.tuple(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'result', 'error')), anyValue)
      .map(([k, v]) => (c: Call) => withMember(c, k, v)),
    fc.tuple(fc.nat(4), fc.nat(), fc.string({ maxLength: 10 }), fc.option(anyValue, { nil: undefined })).map(([i, n, k, v]) => (c: Call) =>
      editObjectParam(c, i, (o) => {
        const keys = Object.keys(o);
        const key = keys.length && n % 3 !== 0 ? keys[n % keys.length] : k;
        if (v === undefined) delete o[key];
        else Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
        return o;
      })),
    fc.tuple(fc.nat(4), depth, fc.constantFrom('array', 'object') as fc.Arbitrary<'array' | 'object'>).map(([i, d, k]) => (c: Call) =>
      editParams(c, (ps) => {
        const j = i % Math.max(1, ps.length);
        ps[j] = nested(d, k, serialize(ps[j]));
        return ps;
      })),
  );
}

/** A valid call of a seed, then zero to three mutations (a third of the calls stay valid). */
export function mutatedCall(seeds: Array<[string, unknown[]]>, methods: string[]): fc.Arbitrary<Call> {
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null));
  const valid = fc.tuple(fc.constantFrom(...seeds), id).map(([[method, ps], i]) => ({ jsonrpc: '2.0', id: i, method, params: structuredClone(ps) }));
  const edits = fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 2, arbitrary: fc.array(mutation(methods), { minLength: 1, maxLength: 3 }) });
  return fc.tuple(valid, edits).map(([c, fs]) => fs.reduce((acc: Call, f) => f(acc), c));
}

/** Objects shaped like requests with every member random, and any value at all. */
export const requestLike: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ jsonrpc: anyValue, id: anyValue, method: fc.oneof(fc.string(), anyValue), params: anyValue }, { requiredKeys: [] }),
  anyValue,
);

type ByteEdit = [position: number, how: 'flip' | 'insert' | 'delete' | 'truncate', byte: number];
const byteEdits = fc.oneof(
  { weight: 5, arbitrary: fc.constant([] as ByteEdit[]) },
  { weight: 1, arbitrary: fc.array(fc.tuple(fc.nat(), fc.constantFrom('flip', 'insert', 'delete', 'truncate'), fc.integer({ min: 0, max: 255 })) as fc.Arbitrary<ByteEdit>, { minLength: 1, maxLength: 3 }) },
);

/** Byte-level damage: a flipped, inserted or deleted byte (often making the body invalid JSON or UTF-8), a cut body. */
function damage(body: Buffer, edits: ByteEdit[]): Buffer {
  let b = body;
  for (const [pos, how, byte] of edits) {
    const at = b.length ? pos % b.length : 0;
    if (how === 'flip') b = Buffer.concat([b.subarray(0, at), Buffer.from([byte]), b.subarray(at + 1)]);
    else if (how === 'insert') b = Buffer.concat([b.subarray(0, at), Buffer.from([byte]), b.subarray(at)]);
    else if (how === 'delete') b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
    else b = b.subarray(0, at);
  }
  return b;
}

/** Bodies: single calls, small batches, random bytes and random JSON, sometimes damaged byte by byte. */
export function bodies(call: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer> {
  const body = fc.oneof(
    { weight: 6, arbitrary: call.map(serialize) },
    { weight: 3, arbitrary: fc.array(call, { maxLength: 6 }).map(serialize) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.json().map((s) => Buffer.from(s)) },
  );
  return fc.tuple(body, byteEdits).map(([b, e]) => damage(b, e));
}

/** Where and how a body is sent: mostly the valid endpoint with JSON; sometimes wrong network, key or type. */
export interface Envelope { path: 'good' | 'devnet' | 'unversioned' | 'unknown-network' | 'bad-key' | 'no-key' | 'random'; segment: string; contentType: string | undefined }
export const GOOD_TYPES = new Set([undefined, 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON']);
export const envelopes: fc.Arbitrary<Envelope> = fc.record({
  path: fc.oneof({ weight: 20, arbitrary: fc.constant('good' as const) }, fc.constantFrom('devnet', 'unversioned', 'unknown-network', 'bad-key', 'no-key', 'random') as fc.Arbitrary<Envelope['path']>),
  segment: fc.string({ minLength: 1, maxLength: 120 }),
  contentType: fc.oneof({ weight: 20, arbitrary: fc.constant('application/json') }, fc.constantFrom(undefined, 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/jsonx', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x')),
});
