/** How long a method an upstream answered "not found" for is not sent to it again, while another may have it. */
export const LEARNT_GAP_MS = 600_000;

/**
 * The methods one upstream does not serve: configured (upstreams[].lacks: a name, or a prefix and `*`), and learnt
 * from its answers (-32601, "does not exist": upstream/classify.ts `notSupported`) for LEARNT_GAP_MS, after which it
 * is asked again (a provider may add a method, a node be upgraded).
 */
export class MethodGaps {
  private readonly names: ReadonlySet<string>;
  private readonly prefixes: readonly string[];
  private readonly learnt = new Map<string, number>();

  constructor(configured: readonly string[]) {
    this.names = new Set(configured.filter((p) => !p.endsWith('*')));
    this.prefixes = configured.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  }

  /** Whether it lacks `method` now. */
  lacks(method: string, now: number): boolean {
    if (this.names.has(method)) return true;
    for (const p of this.prefixes) if (method.startsWith(p)) return true;
    if (this.learnt.size === 0) return false;
    const until = this.learnt.get(method);
    if (until === undefined) return false;
    if (now < until) return true;
    this.learnt.delete(method);
    return false;
  }

  /** It answered that it lacks `method`. */
  learn(method: string, now: number): void {
    // Bounded: a caller cannot grow it past the methods the network allows (a few hundred).
    if (this.learnt.size < 1024) this.learnt.set(method, now + LEARNT_GAP_MS);
  }

  /** What it lacks, for /readyz: the configured ones, and the learnt ones still held. */
  list(now: number): string[] {
    return [...this.names, ...this.prefixes.map((p) => `${p}*`), ...[...this.learnt].filter(([, until]) => now < until).map(([m]) => m)];
  }
}
