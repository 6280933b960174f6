import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './process.ts';

/** Debian's Prometheus server and its rule checker (`.ci/run` installs the `prometheus` package when missing). */
export const PROMETHEUS = '/usr/bin/prometheus';
export const PROMTOOL = '/usr/bin/promtool';

/** Why a suite that needs Prometheus cannot run here; under CI it must run, so nothing is returned and it fails loudly. */
export function prometheusSkipReason(suite: string): string | undefined {
  if ((existsSync(PROMETHEUS) && existsSync(PROMTOOL)) || process.env.CI) return undefined;
  const why = `${suite}: skipped, Prometheus is not installed (apt-get install prometheus)`;
  console.log(`# ${why}`);
  return why;
}

export interface Alert { labels: Record<string, string>; state: 'pending' | 'firing'; value: string }

export interface TestPrometheus {
  url: string;
  /** An instant query; the result's series (a vector), empty when the expression has no data. */
  query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  alerts(): Promise<Alert[]>;
  stop(): Promise<void>;
}

/**
 * Debian's Prometheus on 127.0.0.1 and a free port, scraping `targets` (job `nodegate`) every second and evaluating
 * `rules` (a rules file's object) every second, its data in a temporary folder removed at stop.
 */
export async function startPrometheus(targets: string[], rules: unknown): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-prometheus-'));
  writeFileSync(join(dir, 'rules.yaml'), stringify(rules));
  writeFileSync(join(dir, 'prometheus.yml'), stringify({
    global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '900ms' },
    rule_files: [join(dir, 'rules.yaml')],
    scrape_configs: [{ job_name: 'nodegate', static_configs: [{ targets }] }],
  }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc: ChildProcess = spawn(PROMETHEUS, [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--storage.tsdb.retention.time=1h', '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  const api = async (path: string) => {
    const res = await fetch(url + path);
    const body = await res.json() as { status: string; data: any; error?: string };
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error}`);
    return body.data;
  };
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited at start:\n${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (i > 300) {
      await stop();
      throw new Error(`prometheus not ready within 30 s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async query(expr) {
      const data = await api(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      return data.resultType === 'vector' ? data.result : [];
    },
    async alerts() {
      return (await api('/api/v1/alerts')).alerts as Alert[];
    },
    stop,
  };
}
