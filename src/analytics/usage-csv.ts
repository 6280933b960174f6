import type { UsageMinute } from '../store/usage/usage-store.ts';
import { bucketOf, shownKey, timed, type Bucket } from './report.ts';

/** The CSV export's columns (docs/api.md), in order. */
export const USAGE_CSV_COLUMNS = ['time', 'keyId', 'keyName', 'network', 'method', 'code', 'requests', 'computeUnits', 'latencyMsAvg'] as const;

interface Line { t: string; keyId: string; network: string; method: string; code: number; requests: number; computeUnits: number; latencyMsSum: number; timed: number }

/**
 * Usage rows folded into the CSV export: one line per bucket, key, network, method and outcome, so a
 * spreadsheet's sums equal the JSON report's totals. Rows are added as they are read, like UsageReport.
 */
export class UsageCsv {
  private readonly lines = new Map<string, Line>();

  constructor(private readonly bucket: Bucket) {}

  add(r: UsageMinute): void {
    const t = bucketOf(r.minute, this.bucket);
    const keyId = shownKey(r.keyId);
    const id = `${t}\u0000${keyId}\u0000${r.network}\u0000${r.method}\u0000${r.code}`;
    let l = this.lines.get(id);
    if (!l) this.lines.set(id, (l = { t, keyId, network: r.network, method: r.method, code: r.code, requests: 0, computeUnits: 0, latencyMsSum: 0, timed: 0 }));
    l.requests += r.requests;
    l.computeUnits += r.computeUnits;
    l.latencyMsSum += r.latencyMsSum;
    l.timed += timed(r);
  }

  /** The key ids the lines name (to look their names up once each). */
  keyIds(): string[] {
    return [...new Set([...this.lines.values()].map((l) => l.keyId))];
  }

  /** The CSV text (RFC 4180, CRLF), lines in time order; `names`: key id → the key's name. */
  text(names: ReadonlyMap<string, string>): string {
    const out = [USAGE_CSV_COLUMNS.join(',')];
    const sorted = [...this.lines.values()].sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : b.requests - a.requests));
    for (const l of sorted) {
      const avg = l.timed ? Math.round(l.latencyMsSum / l.timed) : 0;
      out.push([`${l.t}:00Z`, l.keyId, names.get(l.keyId) ?? '', l.network, l.method, l.code, l.requests, l.computeUnits, avg].map(field).join(','));
    }
    return out.join('\r\n') + '\r\n';
  }
}

/**
 * One CSV field: quoted when it holds a comma, quote or line break; text a spreadsheet would run as a formula
 * (a key's name is the user's own text) gets a leading apostrophe (OWASP "CSV injection").
 */
function field(v: string | number): string {
  if (typeof v === 'number') return String(v);
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
