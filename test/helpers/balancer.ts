import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.ts';

/** Where Debian's nginx is (`.ci/run` installs it when missing). */
export const NGINX = '/usr/sbin/nginx';

/** Why a suite that needs nginx cannot run here; under CI it must run, so nothing is returned and it fails loudly. */
export function nginxSkipReason(suite: string): string | undefined {
  if (existsSync(NGINX) || process.env.CI) return undefined;
  const why = `${suite}: skipped, nginx is not installed (apt-get install nginx)`;
  console.log(`# ${why}`);
  return why;
}

export interface Balancer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  stop(): Promise<void>;
}

/**
 * Debian's nginx as an operator runs it in front of Nodegate instances: round-robin, no sticky sessions, plain HTTP/1.1
 * to the instances, and a request that could not be sent to one (connection refused: an instance restarting) passed
 * to the next. It binds 127.0.0.1 on a free port and runs in the foreground as the test's child.
 */
export async function startBalancer(ports: number[]): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-nginx-'));
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream nodegate {
${ports.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://nodegate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout non_idempotent;
      proxy_connect_timeout 2s;
      proxy_read_timeout 30s;
    }
  }
}
`);
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => { err += s; });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  // Ready when it answers (a 502 from an instance not up yet is still nginx answering).
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(`${url}/healthz`);
      break;
    } catch {
      if (child.exitCode !== null || i > 200) throw new Error(`nginx did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    url,
    async stop() {
      child.kill('SIGQUIT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
