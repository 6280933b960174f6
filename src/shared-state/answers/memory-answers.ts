import { EventEmitter } from 'node:events';
import { keptBytes, type Found, type KeptAnswer, type SharedAnswers } from './shared-answers.ts';

interface Entry {
  value: KeptAnswer;
  until: number;
  bytes: number;
}

/**
 * Shared answers in this process's memory: the reference the Redis variant is held to (answers.contract.ts), for
 * callers of one process. Past `maxBytes`, the answers kept longest ago go first.
 */
export class MemoryAnswers implements SharedAnswers {
  private readonly entries = new Map<string, Entry>();
  private readonly leases = new Map<string, number>();
  private readonly kept = new EventEmitter().setMaxListeners(0);
  private bytes = 0;

  constructor(private readonly maxBytes: number, private readonly now: () => number = Date.now) {}

  async find(key: string, leaseMs: number): Promise<Found> {
    const kept = this.get(key);
    if (kept) return { kept };
    const now = this.now();
    if ((this.leases.get(key) ?? 0) > now) return { lease: 'held' };
    this.leases.set(key, now + leaseMs);
    return { lease: 'taken' };
  }

  async keep(key: string, value: KeptAnswer, ttlMs: number): Promise<void> {
    this.remove(key);
    const bytes = keptBytes(key, value);
    this.entries.set(key, { value, until: this.now() + ttlMs, bytes });
    this.bytes += bytes;
    for (const k of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(k);
    }
    this.leases.delete(key);
    this.kept.emit(key, this.get(key));
  }

  async release(key: string): Promise<void> {
    this.leases.delete(key);
    this.kept.emit(key, undefined);
  }

  awaitKept(key: string, waitMs: number): Promise<KeptAnswer | undefined> {
    const now = this.get(key);
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      const done = (value: KeptAnswer | undefined) => {
        clearTimeout(timer);
        this.kept.off(key, done);
        resolve(value);
      };
      const timer = setTimeout(done, waitMs, undefined);
      this.kept.on(key, done);
    });
  }

  async drop(prefix: string): Promise<void> {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.remove(key);
  }

  async close(): Promise<void> {}

  private get(key: string): KeptAnswer | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until > this.now()) return e.value;
    this.remove(key);
    return undefined;
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }
}
