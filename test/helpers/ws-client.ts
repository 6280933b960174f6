import WebSocket from 'ws';

/**
 * A JSON-RPC client on one WebSocket, as an application holds one: answers by id, notifications as they come, and
 * how the socket ended (the close code and reason a client library hands its user).
 */
export class WsClient {
  readonly ws: WebSocket;
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly notes: Array<{ subscription: string; result: unknown }> = [];
  /** Set once closed. */
  ended: { code: number; reason: string } | undefined;
  private readonly waiting = new Map<number, (m: any) => void>();
  private next = 1;
  private onNote = () => {};

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => { this.ws.once('open', () => resolve()); this.ws.once('error', reject); });
    this.closed = new Promise((resolve) => this.ws.once('close', (code, reason) => resolve((this.ended = { code, reason: reason.toString() }))));
    this.ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        if (m.method === 'eth_subscription') {
          this.notes.push(m.params);
          this.onNote();
        } else {
          this.waiting.get(m.id)?.(m);
          this.waiting.delete(m.id);
        }
      }
    });
  }

  /** Sends one call and resolves with its whole answer (result or error). */
  ask(method: string, params: unknown[] = []): Promise<any> {
    const id = this.next++;
    const answered = new Promise((resolve) => this.waiting.set(id, resolve));
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answered;
  }

  /** Resolves once a notification arrives (or has already). */
  noted(): Promise<void> {
    if (this.notes.length) return Promise.resolve();
    return new Promise((resolve) => { this.onNote = resolve; });
  }
}

/** Opens a socket and resolves once it is open; rejects with the HTTP status when the upgrade is refused. */
export async function openWs(url: string): Promise<WsClient> {
  const c = new WsClient(url);
  const refused = new Promise<never>((_, reject) => c.ws.once('unexpected-response', (_req, res) => {
    reject(Object.assign(new Error(`upgrade refused: HTTP ${res.statusCode}`), { status: res.statusCode }));
  }));
  await Promise.race([c.opened, refused]);
  return c;
}
