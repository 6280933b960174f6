/**
 * What an inexact numeric id costs when a body is framed: a 4 MiB body whose id is 0.5 (a double may not give its
 * text back, so the id is read from the body, src/rpc/raw-ids.ts) against JSON.parse of the same body. A lossless
 * re-parse of the whole body takes several times JSON.parse; the scan adds a fraction of one. Printed, not asserted
 * (moved here from src/rpc/raw-ids.test.ts: a unit test times nothing).
 *   npm run bench -- framing
 */
import { performance } from 'node:perf_hooks';
import { frameBody } from '../src/rpc/framing.ts';

export async function benchFraming(): Promise<void> {
  const body = `{"jsonrpc":"2.0","id":0.5,"method":"eth_chainId","params":[${'[1,{"a":"b"}],'.repeat(300_000)}0]}`;
  const best = (f: () => void) => {
    let ms = Infinity;
    for (let r = 0; r < 7; r++) {
      const t0 = performance.now();
      f();
      ms = Math.min(ms, performance.now() - t0);
    }
    return ms;
  };
  const parse = best(() => JSON.parse(body));
  const frame = best(() => frameBody(body, 1000));
  console.log(`\nframing a ${(body.length / 2 ** 20).toFixed(1)} MiB body with id 0.5 (best of 7)`);
  console.log(`  JSON.parse:                     ${parse.toFixed(1)} ms`);
  console.log(`  framed (parse + id scan):       ${frame.toFixed(1)} ms (${(frame / parse).toFixed(2)}x JSON.parse)`);
}
