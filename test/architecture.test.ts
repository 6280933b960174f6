/**
 * The architecture rules (docs/architecture.md), as tests on the import graph of src/:
 *   1. no import circles (type-only imports included: a circle of types is still two concerns made one);
 *   2. only the chain module (src/chain) reaches the upstream clients (src/upstream, but for the shared interface
 *      upstream/upstream.ts);
 *   3. the upstream clients import nothing above them;
 *   4. no module but the chain module asks a node for the head;
 *   5. method facts only in src/methods: no module outside it decides anything by a method's name;
 *   6. the variants of the shared state kept elsewhere (Redis, the workers' primary) are chosen and built in one
 *      place, src/shared-state/open-shared-state.ts.
 *
 * The graph is read here rather than with dependency-cruiser or madge: both parse TypeScript through the
 * `typescript` package's JavaScript API, which TypeScript 7 (this project's compiler) does not have, and the
 * other parser dependency-cruiser accepts (@swc/core) brings platform packages this project's registry does not
 * serve, which `npm ci` then refuses. The sources use one import style (ES modules with explicit `.ts`
 * specifiers), so their imports are read exactly by the patterns below.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');

/** Source files of src/, tests excluded. */
function sources(dir = src): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.contract.ts') ? [p] : [];
  });
}

/** `import … from '…'`, `import '…'`, `export … from '…'`, `import('…')`: relative specifiers only. */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** The import graph of src/: file (relative to the root) → the files it imports. */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of sources()) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      deps.push(relative(root, resolve(dirname(file), spec)));
    }
    g.set(relative(root, file), deps);
  }
  return g;
}

/** Every circle of the graph, as the list of files around it (depth-first search, each circle once). */
function circles(g: Map<string, string[]>): string[][] {
  const found = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const d of g.get(f) ?? []) {
      if (!g.has(d)) continue;
      if (state.get(d) === 'open') {
        const cycle = stack.slice(stack.indexOf(d));
        found.set([...cycle].sort().join(' '), [...cycle, d]);
      } else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of g.keys()) if (!state.has(f)) visit(f);
  return [...found.values()];
}

test('the import graph is read whole: every src module, and their imports resolve to files', () => {
  const g = graph();
  assert.ok(g.size > 100, `${g.size} modules`);
  const missing = [...g].flatMap(([f, deps]) => deps.filter((d) => d.startsWith('src/') && !g.has(d) && !d.endsWith('.json')).map((d) => `${f} → ${d}`));
  // A relative import of a test helper or of a data file is fine; one of a source that is not there is a misread.
  assert.deepEqual(missing.filter((m) => !m.includes('.test.ts') && !m.includes('.contract.ts')), []);
});

test('no import circles in src/ (type-only imports included)', () => {
  const found = circles(graph()).map((c) => c.join(' → '));
  assert.deepEqual(found, []);
  // The rule bites: a circle through filters, pipeline and networks is found.
  const before = new Map([['filters', ['pipeline']], ['pipeline', ['networks']], ['networks', ['filters', 'table']], ['table', ['filters']]]);
  assert.ok(circles(before).length >= 1);
});

test('only the chain module (and the assembly of a network, src/networks/) reaches the upstream clients; they import nothing above them', () => {
  const g = graph();
  // upstream.ts (the interface and answer types) and classify.ts (what an outcome means: pure functions, no I/O) are
  // what the layers above may read of an upstream; every other file there is a client, reached through the chain.
  const notClients = new Set(['src/upstream/upstream.ts', 'src/upstream/classify.ts']);
  const isClient = (f: string) => f.startsWith('src/upstream/') && !notClients.has(f);
  // src/networks/networks.ts builds a network's clients (an anvil supervisor or HTTP nodes) and hands them to its
  // chain module; nothing else constructs or calls one.
  const reaches = (f: string) => f.startsWith('src/chain/') || f.startsWith('src/upstream/') || f === 'src/networks/networks.ts';
  const reaching = [...g].flatMap(([f, deps]) => deps.filter(isClient).filter(() => !reaches(f)).map((d) => `${f} → ${d}`));
  assert.deepEqual(reaching, []);
  const above = /^src\/(chain|networks|rpc|methods|cache|filters|api|accounts|auth|cli|store|analytics|dashboard|app\.ts)/;
  const upward = [...g].filter(([f]) => f.startsWith('src/upstream/')).flatMap(([f, deps]) => deps.filter((d) => above.test(d)).map((d) => `${f} → ${d}`));
  assert.deepEqual(upward, []);
});

test('no module but the chain module asks a node for the head (eth_blockNumber, the latest block)', () => {
  // A call whose first argument is the method: call('eth_blockNumber', …), next('eth_getBlockByNumber', ['latest', …]).
  const asksHead = /(call|next)\(\s*['"]eth_blockNumber['"]|(call|next)\(\s*['"]eth_getBlockByNumber['"]\s*,\s*\[\s*['"]latest['"]/;
  const offenders = sources().filter((f) => !relative(root, f).startsWith('src/chain/') && asksHead.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
  assert.deepEqual(offenders, []);
  // The rule bites: a module asking for the head in this shape is caught; one naming the method only is not.
  assert.ok(asksHead.test("next('eth_blockNumber', [])") && !asksHead.test("methodAllowlist.includes('eth_blockNumber')"));
  assert.ok(asksHead.test("await node.call('eth_getBlockByNumber', ['latest', false])"));
});

test('transports run the pipeline, they hold no stage: the HTTP route imports the endpoint, not the stages', () => {
  const g = graph();
  // A transport reaches the stages only through rpc/endpoint.ts; a stage's own module in a transport is a copy to be.
  const stage = /^src\/(rpc\/(stages\/|pipeline\.ts|admit\.ts|frame-and-limit\.ts|run\.ts|framing\.ts|deadline\.ts)|auth\/|limits\/|cache\/|filters\/|chain\/|upstream\/)/;
  const transports = ['src/http/rpc-route.ts', 'src/http/rpc-http.ts', 'src/http/rpc-exchange.ts', 'src/http/ws-route.ts'];
  const reaching = transports.flatMap((f) => (g.get(f) ?? []).filter((d) => stage.test(d)).map((d) => `${f} → ${d}`));
  assert.deepEqual(reaching, []);
  // And the stages know no transport: nothing under src/rpc imports src/http or fastify.
  const rpcFiles = [...g.keys()].filter((f) => f.startsWith('src/rpc/'));
  const toHttp = rpcFiles.flatMap((f) => (g.get(f) ?? []).filter((d) => d.startsWith('src/http/')).map((d) => `${f} → ${d}`));
  const fastify = rpcFiles.filter((f) => /from\s+['"]fastify['"]/.test(readFileSync(join(root, f), 'utf8')));
  assert.deepEqual([...toHttp, ...fastify], []);
  // The rule bites: a route that runs the stages itself imports these.
  assert.ok(stage.test('src/rpc/pipeline.ts') && stage.test('src/limits/limits.ts') && stage.test('src/auth/authorize.ts'));
  for (const f of ['src/http/rpc-route.ts', 'src/http/rpc-http.ts']) assert.ok(readFileSync(join(root, f), 'utf8').split('\n').length < 120, `${f}: the HTTP route stays under 120 lines`);
});

test('no import circles between the folders of src/ (each capability stands on the ones below it)', () => {
  // The folder of a module: src/<folder>/…, or the file itself for src/app.ts (the composition root).
  const folderOf = (f: string) => f.split('/')[1].replace(/\.ts$/, '');
  const folders = new Map<string, Set<string>>();
  for (const [f, deps] of graph()) {
    const from = folderOf(f);
    const to = folders.get(from) ?? new Set<string>();
    for (const d of deps) if (d.startsWith('src/') && folderOf(d) !== from) to.add(folderOf(d));
    folders.set(from, to);
  }
  const g = new Map([...folders].map(([k, v]) => [k, [...v]]));
  const found = circles(g).map((c) => c.join(' → '));
  assert.deepEqual(found, []);
  // The rule bites: folders where the chain module reads the method table and the request path the chain make a circle.
  assert.ok(circles(new Map([['chain', ['rpc']], ['rpc', ['chain', 'limits']], ['limits', ['rpc']]])).length >= 1);
});

/** The method families whose names a node answers to: a string literal of one of them, or a bare prefix (`'debug_'`). */
const METHOD_NAME = /(['"`])((?:eth|debug|net|web3|txpool|evm|anvil|hardhat|personal)_\w*)\1/g;
/**
 * Where a method name may stand outside src/methods: as the method of a call to a node, that is, the first argument
 * of `call(` (`node.call('evm_mine', …)`), or a name directly followed by its params array (`next('eth_getLogs', [q])`,
 * `pool.probe(m, 'eth_chainId', [], …)`) and itself an argument (after `(` or `,`). Anything else (`===`,
 * `startsWith`, a Set or list of names, `.has`, `.includes`, a map's key, `case`) decides by the name: that is a
 * fact of the method, and belongs in its spec (src/methods/method-spec.ts).
 */
function namesDecidedOn(text: string): string[] {
  // Comments name methods freely; a line comment starts at `//` after a space or a line's start (not `http://`).
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
  const out: string[] = [];
  for (const m of code.matchAll(METHOD_NAME)) {
    const before = code.slice(Math.max(0, m.index - 40), m.index);
    const after = code.slice(m.index + m[0].length, m.index + m[0].length + 8);
    const called = /\bcall\(\s*$/.test(before) || (/[(,]\s*$/.test(before) && /^\s*,\s*\[/.test(after));
    if (!called) out.push(m[2]);
  }
  return out;
}

test('method facts only in src/methods: no module outside it decides by a method name (lists, prefixes, comparisons)', () => {
  // A column of the plans table, not a method.
  const notMethods = new Set(['debug_methods']);
  const offenders = sources()
    .filter((f) => !relative(root, f).startsWith('src/methods/') && !f.includes('/fixtures/'))
    .flatMap((f) => namesDecidedOn(readFileSync(f, 'utf8')).filter((n) => !notMethods.has(n)).map((n) => `${relative(root, f)}: '${n}'`));
  assert.deepEqual(offenders, []);
  // The rule bites: each shape of a decision by name is caught (a prefix test, a list of names, a comparison, a
  // lookup by name).
  assert.deepEqual(namesDecidedOn("const trace = method.startsWith('debug_');"), ['debug_']);
  assert.deepEqual(namesDecidedOn("const ONE_NODE = new Set(['eth_signTransaction', 'eth_signTypedData']);"), ['eth_signTransaction', 'eth_signTypedData']);
  assert.deepEqual(namesDecidedOn("if (method === 'eth_sendRawTransaction') return raw();"), ['eth_sendRawTransaction']);
  assert.deepEqual(namesDecidedOn("const getLogs = ctx.network.methods.get('eth_getLogs');"), ['eth_getLogs']);
  assert.deepEqual(namesDecidedOn("const pairs = new Map([['eth_call', ['x']]]);"), ['eth_call']);
  // And it lets calls by name through: a node's own method, asked of it.
  assert.deepEqual(namesDecidedOn("await node.call('evm_setAutomine', [false], 5000);\nawait client.call('eth_sendRawTransaction', params, ms);"), []);
  assert.deepEqual(namesDecidedOn("this.pool.probe(m, 'eth_chainId', [], 1000); next('eth_getLogs', [query]); // 'debug_' in a comment"), []);
});

/** A variant of a shared kind kept outside the process: src/shared-state/<kind>/redis-*.ts or remote-*.ts. */
const isRemoteVariant = (f: string) => /^src\/shared-state\/[^/]+\/(redis|remote)-[^/]+\.ts$/.test(f);
const OPEN_SHARED_STATE = 'src/shared-state/open-shared-state.ts';

/** Imports of a Redis or IPC variant from anywhere but open-shared-state.ts (or that variant's own parts, beside it). */
function variantsBuiltElsewhere(g: Map<string, string[]>): string[] {
  return [...g].flatMap(([f, deps]) => deps
    .filter((d) => isRemoteVariant(d) && f !== OPEN_SHARED_STATE && !(isRemoteVariant(f) && dirname(f) === dirname(d)))
    .map((d) => `${f} → ${d}`));
}

test('the shared state\'s Redis and IPC variants are chosen and built in one place, open-shared-state.ts', () => {
  const g = graph();
  assert.ok([...g.keys()].filter(isRemoteVariant).length >= 10, 'the variants are where the rule looks for them');
  assert.deepEqual(variantsBuiltElsewhere(g), []);
  // The rule bites: a variant built by the composition root, a worker's entry or an opener per kind is caught,
  // while a variant's own parts beside it stay allowed.
  assert.deepEqual(variantsBuiltElsewhere(new Map([
    ['src/app.ts', ['src/shared-state/heads/redis-heads.ts']],
    ['src/cli/worker.ts', ['src/shared-state/rate-limiter/remote-rate-limiter.ts']],
    ['src/api/register.ts', ['src/shared-state/login-backoff/redis-login-backoff.ts']],
    ['src/shared-state/filter-store/redis-filter-store.ts', ['src/shared-state/filter-store/redis-filter-scripts.ts']],
    [OPEN_SHARED_STATE, ['src/shared-state/filter-store/redis-filter-store.ts']],
  ])), [
    'src/app.ts → src/shared-state/heads/redis-heads.ts',
    'src/cli/worker.ts → src/shared-state/rate-limiter/remote-rate-limiter.ts',
    'src/api/register.ts → src/shared-state/login-backoff/redis-login-backoff.ts',
  ]);
});
