import { createServer, type Server } from 'node:http';

/**
 * A node's URL on 127.0.0.1 whose node can be changed the ways operators meet: the node behind it replaced by
 * another (`swap`, as a proxy in front of nodes does; `dropConnections` as well when the new node is a new process),
 * the node gone (`down`: every connection dropped at once), or stalled (`hang`: requests never answered). It counts
 * the answers with a result it gave for `counted` methods, by the node that gave them: what callers were served.
 */
export interface SwitchNode {
  url: string;
  /** Where calls go now (an anvil's URL). */
  target: string;
  mode: 'up' | 'down' | 'hang';
  /** Answers with a result to a `counted` method, by target URL. */
  served: Map<string, number>;
  /** Closes every open connection to it (a new node process behind the address). */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startSwitchNode(target: string, counted: ReadonlySet<string>): Promise<SwitchNode> {
  const served = new Map<string, number>();
  const node = { target, mode: 'up' as SwitchNode['mode'] };
  const server: Server = createServer((req, res) => {
    if (node.mode === 'down') return void req.socket.destroy();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', async () => {
      if (node.mode === 'hang') return;
      const to = node.target;
      try {
        const body = Buffer.concat(chunks).toString();
        const answer = await fetch(to, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(10_000) });
        const text = await answer.text();
        const asked = [JSON.parse(body)].flat() as Array<{ id: unknown; method: string }>;
        const got = [JSON.parse(text)].flat() as Array<{ id: unknown; result?: unknown }>;
        // Counted once the answer went out whole (a connection dropped meanwhile took it nowhere).
        res.on('finish', () => {
          for (const a of got) {
            const q = asked.find((x) => x.id === a.id);
            if (q && counted.has(q.method) && a.result !== undefined) served.set(to, (served.get(to) ?? 0) + 1);
          }
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    get target() { return node.target; },
    set target(t: string) { node.target = t; },
    get mode() { return node.mode; },
    set mode(m: SwitchNode['mode']) { node.mode = m; },
    served,
    dropConnections: () => server.closeAllConnections(),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
