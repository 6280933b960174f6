import { CHAIN_WINDOW_BLOCKS } from '../chain/chain-window.ts';

/** Bytes budgets of what the producer keeps in memory (webhooks.keptBytesPerWebhook, webhooks.keptBytesTotal). */
export interface KeptBudget {
  perWebhook: number;
  total: number;
}

/**
 * Blocks kept per webhook at most, whatever their size: the chain window's size, the deepest reorganisation whose
 * dropped blocks it names.
 */
const KEPT_BLOCKS = CHAIN_WINDOW_BLOCKS;

/**
 * What recent blocks gave each webhook (its matching logs, activity, transactions), kept to send them again as
 * removed after a reorganisation, within a byte budget per webhook and in total (128 blocks of 3,000 logs
 * per webhook, with no byte budget and never freed on delete, took RSS from 193 MB to 1.3 GB). Kept as the JSON text
 * the events were written with, so its size is known exactly. Anything evicted is not lost: the outbox in the store
 * holds every event written, and the producer reads a dropped block's events back from it.
 */
export class KeptEvents {
  /** Oldest first: `${webhookId} ${blockHash}` -> the items as JSON. */
  private readonly entries = new Map<string, { webhookId: string; json: string }>();
  private readonly perWebhook = new Map<string, { bytes: number; blocks: number }>();
  private bytes = 0;

  constructor(private readonly budget: KeptBudget) {}

  /**
   * Keeps what a block gave a webhook (its items as JSON text: the very text its event was written with, so nothing is
   * serialised twice), evicting its oldest (then everyone's oldest) to stay within the budgets. Webhooks with the same
   * filter share one text; each is still charged its whole size, so the budgets hold whatever is shared.
   */
  set(webhookId: string, blockHash: string, json: string): void {
    this.delete(webhookId, blockHash);
    if (json === '[]') return;
    const size = 2 * json.length; // UTF-16 in memory, at most
    if (size > this.budget.perWebhook || size > this.budget.total) return; // read back from the outbox if ever needed
    for (const [k, e] of this.entries) {
      const mine = this.perWebhook.get(webhookId) ?? { bytes: 0, blocks: 0 };
      if (mine.bytes + size <= this.budget.perWebhook && mine.blocks < KEPT_BLOCKS) break;
      if (e.webhookId === webhookId) this.drop(k);
    }
    for (const [k] of this.entries) {
      if (this.bytes + size <= this.budget.total) break;
      this.drop(k);
    }
    this.entries.set(`${webhookId} ${blockHash}`, { webhookId, json });
    const now = this.perWebhook.get(webhookId) ?? { bytes: 0, blocks: 0 };
    this.perWebhook.set(webhookId, { bytes: now.bytes + size, blocks: now.blocks + 1 });
    this.bytes += size;
  }

  /** What a block gave a webhook, if still kept. */
  get(webhookId: string, blockHash: string): unknown[] | undefined {
    const e = this.entries.get(`${webhookId} ${blockHash}`);
    return e && (JSON.parse(e.json) as unknown[]);
  }

  delete(webhookId: string, blockHash: string): void {
    const k = `${webhookId} ${blockHash}`;
    if (this.entries.has(k)) this.drop(k);
  }

  /** Frees everything kept for webhooks not in `live` (deleted, disabled). */
  retain(live: ReadonlySet<string>): void {
    for (const [k, e] of this.entries) if (!live.has(e.webhookId)) this.drop(k);
  }

  /** Bytes kept, in total and for one webhook. */
  size(webhookId?: string): number {
    return webhookId === undefined ? this.bytes : this.perWebhook.get(webhookId)?.bytes ?? 0;
  }

  private drop(k: string): void {
    const e = this.entries.get(k)!;
    this.entries.delete(k);
    const size = 2 * e.json.length;
    this.bytes -= size;
    const w = this.perWebhook.get(e.webhookId)!;
    if (w.blocks <= 1) this.perWebhook.delete(e.webhookId);
    else this.perWebhook.set(e.webhookId, { bytes: w.bytes - size, blocks: w.blocks - 1 });
  }
}
