/**
 * The order of a `--workers N` stop: every worker closes its listener before any of them starts telling clients to
 * reconnect. The shared port is the primary's (node's cluster hands each connection to a worker in turn), and it
 * closes only once no worker listens: a worker that answered `Connection: close` while another still listened would
 * send its clients to a port about to close, and node resets the connections it has accepted but not yet handed out
 * when that happens (the requests on them unanswered). Once every worker has closed its listener, a client's new
 * connection is refused at connect, before it has sent anything.
 *
 * Each stopping worker says it has closed its listener (`closed`) and waits for the answer: when the primary stops,
 * that answer comes once no worker listens (or the others have exited); a worker stopping on its own (a signal to it
 * alone) is answered at once, and the others go on serving the port.
 */
export class PortClosing {
  private listening: Set<number> | undefined;
  private readonly waiting: Array<() => void> = [];

  /** The primary stops: these workers (by cluster id) listen on the shared port until each says otherwise. */
  begin(workers: Iterable<number>): void {
    this.listening = new Set(workers);
    this.settle();
  }

  /** Worker `id` closed its listener; resolves once no worker listens (at once when the primary is not stopping). */
  closed(id: number): Promise<void> {
    if (!this.listening) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.gone(id);
    });
  }

  /** Worker `id` exited: it listens no more. */
  gone(id: number): void {
    this.listening?.delete(id);
    this.settle();
  }

  private settle(): void {
    if (this.listening?.size === 0) for (const resolve of this.waiting.splice(0)) resolve();
  }
}
