import { bucketOf, UsageReport } from '../../analytics/report.ts';
import { EVERYONE } from '../../store/usage/usage-rows.ts';
import { minuteOf } from '../../store/minute.ts';
import { monthOf } from '../../limits/quota.ts';
import { UsageError } from '../errors.ts';
import { JSON_FLAG, type Subcommand } from '../command.ts';
import { findAccount, withStore } from '../context.ts';
import { str } from '../flags.ts';
import { fields, table } from '../format.ts';

const HOURS = 3_600_000;

/** `nodegate usage show`: the analytics of the store (what the gateway flushed), for one account or all. */
export const USAGE_COMMANDS: Record<string, Subcommand> = {
  show: {
    usage: 'show [--account ID|EMAIL] [--key ID] [--network NAME] [--method NAME] [--status ok|error|CODE] [--hours N] [--json]',
    summary: 'requests, compute units and errors by method of the last N hours (24 by default), and the quota used this month',
    options: { ...JSON_FLAG, account: { type: 'string' }, key: { type: 'string' }, network: { type: 'string' }, method: { type: 'string' }, status: { type: 'string' }, hours: { type: 'string' } },
    run: withStore(async (cx, v) => {
      const hours = v.hours === undefined ? 24 : Number(v.hours);
      if (!Number.isFinite(hours) || hours <= 0 || hours > 24 * 90) throw new UsageError('--hours must be a number of hours from 1 to 2160');
      const now = Date.now();
      const bucket = hours <= 3 ? 'minute' : hours <= 72 ? 'hour' : 'day';
      // From its bucket's start: an hour or day bucket counts whole hours or days, as the analytics API does.
      const from = bucketOf(minuteOf(now - hours * HOURS), bucket);
      const to = minuteOf(now + 60_000);
      // An account that does not exist is an error, not a report of zeros.
      const ref = str(v, 'account');
      const accountId = ref === undefined ? undefined : (await findAccount(cx, ref)).id;
      const s = str(v, 'status');
      if (s !== undefined && !/^(ok|error|-?\d{1,6})$/.test(s)) throw new UsageError('--status must be ok, error, or an error code such as -32005');
      const status = s === undefined || s === 'ok' || s === 'error' ? s : Number(s);
      const keyId = str(v, 'key');
      // Added up by the database at the buckets' grain; all accounts from the rows that add up everyone's calls.
      const everyone = accountId === undefined && keyId === undefined;
      const report = new UsageReport(from, to, bucket);
      report.addGroups(await cx.store.usage.summarizeUsage({
        grain: bucket, from, to, accountId: everyone ? EVERYONE : accountId, keyId, network: str(v, 'network'), method: str(v, 'method'), status,
      }));
      const r = report.result();
      const month = monthOf(now);
      const quota = accountId ? { month, used: await cx.store.usage.getUsage(accountId, month) } : undefined;
      const text = [
        fields([['range', `${from} to ${to} UTC`], ['requests', String(r.totals.requests)], ['compute units', String(r.totals.computeUnits)], ['errors', String(r.totals.errors)],
          ['average latency', `${r.latency.avgMs} ms`], ...(quota ? [['quota used this month', `${quota.used} compute units (${month})`] as [string, string]] : [])]),
        '',
        table(['METHOD', 'REQUESTS', 'COMPUTE UNITS', 'ERRORS'], r.byMethod.map((m) => [m.method, String(m.requests), String(m.computeUnits), String(m.errors)]), 'no calls in this range'),
      ].join('\n');
      return { json: { ...r, quota }, text };
    }),
  },
};
