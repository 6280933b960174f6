/**
 * The load generator of the benchmarks: `wrk` (Debian's; native, in its own process, never in the measured one),
 * one thread, a Lua script per workload; its summary comes back as one JSON line from the script's `done`.
 */
import { spawn } from 'node:child_process';

/** wrk's summary as JSON on one line, after the run (`done` runs once, in the main Lua state). */
export const DONE = `
function done(s, latency, requests)
  io.write(string.format('WRK {"requests":%d,"us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',
    s.requests, s.duration, s.errors.connect, s.errors.read, s.errors.write, s.errors.status, s.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

export interface WrkResult { requests: number; us: number; errors: number; p50: number; p99: number }

export function wrk(url: string, script: string, seconds: number, connections: number): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', script, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s; });
    child.once('error', reject);
    child.once('exit', (code) => {
      const m = /^WRK (\{.*\})$/m.exec(out);
      if (code !== 0 || !m) return reject(new Error(`wrk exited ${code}: ${out}`));
      const r = JSON.parse(m[1]);
      resolve({ requests: r.requests, us: r.us, errors: r.connect + r.read + r.write + r.status + r.timeout, p50: r.p50, p99: r.p99 });
    });
  });
}

