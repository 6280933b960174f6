// The execution-apis conformance cases (test/fixtures/execution-apis), replayed through the gateway: a replay
// upstream answers each recorded request with its recorded (geth) response, and the gateway's answer must
// equal it by the hive "rpc-compat" rules. Known differences are listed, with a reason, in expected-failures.json.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { ALLOWED_METHODS } from '../../src/methods/allowed.ts';
import { methodSchemas } from '../../src/methods/schemas/method-schemas.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { canonicalJson, ReplayUpstream, type RecordedPair } from './replay-upstream.ts';

const TESTS_DIR = fileURLToPath(new URL('../fixtures/execution-apis/tests/', import.meta.url));
const EXPECTED_FAILURES_FILE = new URL('./expected-failures.json', import.meta.url);
/** The chain the fixtures were recorded on (execution-apis tests/genesis.json). */
const CHAIN_ID = 3503995874084926;

interface Exchange extends RecordedPair {
  /** The `>>` line as recorded, sent to the gateway byte for byte. */
  raw: string;
}

interface Case {
  /** Path under tests/, e.g. `eth_call/call-contract.io`: the case's name in expected-failures.json. */
  file: string;
  method: string;
  speconly: boolean;
  exchanges: Exchange[];
}

/** Parses one `.io` file: `//` comments (`speconly:` among them), then `>>` request / `<<` response pairs. */
function parseCase(file: string, text: string): Case {
  const exchanges: Exchange[] = [];
  let speconly = false;
  let pending: { raw: string; request: Exchange['request'] } | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('//')) {
      if (/^\/\/\s*speconly:/.test(line)) speconly = true;
    } else if (line.startsWith('>>')) {
      assert.equal(pending, undefined, `${file}: two requests in a row`);
      const raw = line.slice(2).trim();
      pending = { raw, request: JSON.parse(raw) };
    } else if (line.startsWith('<<')) {
      assert.ok(pending, `${file}: a response without a request`);
      exchanges.push({ ...pending, response: JSON.parse(line.slice(2).trim()) });
      pending = undefined;
    } else {
      assert.equal(line.trim(), '', `${file}: unexpected line ${line.slice(0, 40)}`);
    }
  }
  assert.equal(pending, undefined, `${file}: a request without a response`);
  assert.ok(exchanges.length > 0, `${file}: no exchange`);
  return { file, method: exchanges[0].request.method, speconly, exchanges };
}

function loadCases(): Case[] {
  const allowed = new Set(ALLOWED_METHODS);
  const cases: Case[] = [];
  for (const dir of readdirSync(TESTS_DIR, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const name of readdirSync(join(TESTS_DIR, dir.name)).sort()) {
      if (!name.endsWith('.io')) continue;
      const c = parseCase(`${dir.name}/${name}`, readFileSync(join(TESTS_DIR, dir.name, name), 'utf8'));
      if (allowed.has(c.method)) cases.push(c);
    }
  }
  return cases.sort((a, b) => (a.file < b.file ? -1 : 1));
}

function loadExpectedFailures(): Map<string, string> {
  const doc = JSON.parse(readFileSync(EXPECTED_FAILURES_FILE, 'utf8')) as Record<string, unknown>;
  const out = new Map<string, string>();
  for (const [file, entry] of Object.entries(doc)) {
    if (file.startsWith('$')) continue; // "$comment"
    const reason = (entry as { reason?: unknown })?.reason;
    assert.ok(typeof reason === 'string' && reason.trim().length > 0, `expected-failures.json: ${file} needs a "reason"`);
    out.set(file, reason);
  }
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
const resultValidators = new Map<string, ValidateFunction>();
function resultValidator(method: string): ValidateFunction {
  let v = resultValidators.get(method);
  if (!v) {
    const schema = methodSchemas[method]?.result;
    assert.ok(schema, `no result schema for ${method}`);
    v = ajv.compile(schema);
    resultValidators.set(method, v);
  }
  return v;
}

const short = (v: unknown, n = 400) => {
  const s = v === undefined ? 'undefined' : JSON.stringify(v);
  return s.length > n ? s.slice(0, n) + '…' : s;
};

/**
 * The hive rpc-compat comparison of one response: exact JSON equality with key order ignored; where both hold
 * an error, `error.message` is ignored (code and data must match); for a `speconly` case whose expected
 * response holds no error, the answer must hold a result of the method's result schema. Returns why it
 * differs, or undefined when it passes.
 */
function compare(method: string, speconly: boolean, expected: Record<string, unknown>, actual: unknown): string | undefined {
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `not a response object: ${short(actual)}`;
  const got = actual as Record<string, unknown>;
  if (speconly && expected.error === undefined) {
    if (got.jsonrpc !== expected.jsonrpc || canonicalJson(got.id) !== canonicalJson(expected.id)) {
      return `envelope differs: got jsonrpc ${short(got.jsonrpc)} id ${short(got.id)}`;
    }
    if (got.error !== undefined || !('result' in got)) return `want a result, got ${short(got)}`;
    const validate = resultValidator(method);
    if (!validate(got.result)) {
      const e = validate.errors?.[0];
      return `result does not match the ${method} result schema at ${e?.instancePath || '/'}: ${e?.message} (${short(got.result, 200)})`;
    }
    return undefined;
  }
  let want: Record<string, unknown> = expected;
  let have: Record<string, unknown> = got;
  const isError = (e: unknown): e is Record<string, unknown> => e !== null && typeof e === 'object' && !Array.isArray(e);
  if (isError(want.error) && isError(have.error)) {
    const { message: _w, ...wantError } = want.error;
    const { message: _h, ...haveError } = have.error;
    want = { ...want, error: wantError };
    have = { ...have, error: haveError };
  }
  if (canonicalJson(want) === canonicalJson(have)) return undefined;
  return `response differs\n      want ${short(expected)}\n      got  ${short(got)}`;
}

const cases = loadCases();
const expectedFailures = loadExpectedFailures();
let replay: ReplayUpstream;
let gw: TestGateway;

before(async () => {
  replay = await new ReplayUpstream(CHAIN_ID).start();
  // No cache: the replay node answers only each fixture's recorded requests (the cache's head polls are others),
  // and fixtures from different chains may ask the same thing; the cache has its own suite (test/e2e/cache.test.ts).
  // No verification either: its header reads are requests no fixture recorded (test/e2e/upstream-verify.test.ts).
  gw = await startTestGateway({ networks: { mainnet: { chainId: CHAIN_ID, upstream: replay.url, verify: 'off' } }, cache: { enabled: false } });
});

after(async () => {
  await gw?.close();
  await replay?.close();
});

/** Runs one case through the gateway, its exchanges in order; returns why it fails, or undefined. */
async function runCase(c: Case): Promise<string | undefined> {
  replay.use(c.exchanges);
  const problems: string[] = [];
  for (const [i, x] of c.exchanges.entries()) {
    const r = await gw.rpc(x.raw);
    const why = compare(c.method, c.speconly, x.response, r.body ?? r.text);
    if (why) problems.push(`exchange ${i + 1} (HTTP ${r.status}): ${why}`);
  }
  for (const m of replay.misses) problems.push(`the gateway sent a request with no recording: ${short({ method: m.method, params: m.params })}`);
  return problems.length > 0 ? problems.join('\n    ') : undefined;
}

test('execution-apis conformance replay', async (t) => {
  assert.ok(cases.length > 0, 'no conformance cases found');
  const known = new Set(cases.map((c) => c.file));
  for (const file of expectedFailures.keys()) assert.ok(known.has(file), `expected-failures.json lists ${file}, which is not a case`);

  let passed = 0;
  let failedAsExpected = 0;
  for (const c of cases) {
    const reason = expectedFailures.get(c.file);
    const why = await runCase(c);
    if (reason === undefined) {
      await t.test(c.file, () => {
        if (why) assert.fail(`${c.file}:\n    ${why}`);
      });
      if (!why) passed++;
    } else {
      // An expected failure that passes now must leave the list, so the list cannot rot.
      await t.test(`${c.file} (expected failure: ${reason})`, () => {
        if (!why) assert.fail(`${c.file} passes now: remove it from test/conformance/expected-failures.json`);
      });
      if (why) failedAsExpected++;
    }
  }
  console.log(`conformance: ${passed} passed, ${failedAsExpected} expected failures, ${cases.length} total`);
  assert.equal(passed + failedAsExpected, cases.length, 'some cases failed, see above');
});
