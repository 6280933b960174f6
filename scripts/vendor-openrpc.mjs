// Vendors the parts of Ethereum's execution-apis OpenRPC document that Nodegate uses (CC0-1.0):
// the params and result schemas of the allowed methods. Run once when the upstream document changes:
//   node scripts/vendor-openrpc.mjs ../shared/conformance/execution-apis/openrpc.json
import { readFileSync, writeFileSync } from 'node:fs';

const [src = '../shared/conformance/execution-apis/openrpc.json'] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(src, 'utf8'));
const allowed = new Set(JSON.parse(readFileSync(new URL('../src/methods/allowed.json', import.meta.url), 'utf8')));
// Descriptions and examples are documentation, not validation: dropping them keeps the vendored file small.
const strip = (v) => {
  if (Array.isArray(v)) return v.map(strip);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) if (k !== 'description' && k !== 'examples') o[k] = strip(x);
    return o;
  }
  return v;
};
const out = {};
for (const m of doc.methods) {
  if (!allowed.has(m.name)) continue;
  out[m.name] = {
    params: m.params.map((p) => ({ name: p.name, required: !!p.required, schema: strip(p.schema) })),
    result: strip(m.result?.schema ?? {}),
  };
}
const header = { $comment: 'Vendored from ethereum/execution-apis openrpc.json (CC0-1.0) by scripts/vendor-openrpc.mjs', source: 'execution-apis assembled-spec-main @ f56fd1d' };
writeFileSync(new URL('../src/methods/schemas/openrpc-methods.json', import.meta.url), JSON.stringify({ ...header, methods: out }, null, 1) + '\n');
console.log(`vendored ${Object.keys(out).length} methods`);
