// @ts-check
// The numbers people look at first (the overview, a key's page): the last 24 hours and this month, each as
// requests, compute units, errors with their rate, and the median and p99 latency, then per key and per network.
// Latency is kept in buckets (5, 25, 100, 500, 2500 ms), so a percentile reads "≤ 25 ms", never a made-up figure.
import { api, query } from '../lib/api.js';
import { compact, fmt, h } from '../lib/dom.js';
import { capital } from '../lib/facts.js';
import { cardTable } from './table.js';

/** @typedef {import('../lib/types.js').UsageReport} UsageReport */
/** @typedef {import('../lib/types.js').Timed} Timed */

/** A percentile in words: "≤ 25 ms", "over 2,500 ms" (slower than the last bucket), "—" (nothing timed). @param {number | null | undefined} ms @param {number} requests */
export const latencyText = (ms, requests) => (requests === 0 || ms === undefined ? '—' : ms === null ? 'over 2,500 ms' : `≤ ${fmt(ms)} ms`);

/** "1.5 %": the share of requests that failed. @param {{ requests: number, errors: number }} t */
export const errorRate = (t) => `${t.requests ? (Math.round((1000 * t.errors) / t.requests) / 10).toLocaleString('en-US') : 0} %`;

/** "3 (1.5 %)": errors and their share of the requests. @param {{ requests: number, errors: number }} t */
export const errorsText = (t) => (t.requests ? `${fmt(t.errors)} (${errorRate(t)})` : '0');

/**
 * A monthly quota a person reads: "unlimited" for a plan no one reaches (10^15 and more: the development plan),
 * else in words ("30 million").
 * @param {number} n
 */
export const quotaWords = (n) => (n >= 1e15 ? 'unlimited' : compact(n));

/** The start of this month (UTC) and of the last 24 hours, as the analytics API takes them. */
export const since = () => {
  const now = new Date();
  return { day: new Date(now.getTime() - 86_400_000).toISOString(), month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString() };
};

/** @param {string} id @param {string} value @param {string} label */
const stat = (id, value, label) => h('div', { class: 'card stat' }, h('div', { class: 'value', id }, value), h('div', { class: 'label' }, label));

/**
 * The five figures of a report, as stat cards whose ids start with `id`.
 * @param {UsageReport} r @param {string} id
 */
export function statCards(r, id) {
  const t = r.totals;
  return h('div', { class: 'stats' },
    stat(`${id}-requests`, fmt(t.requests), 'requests'),
    stat(`${id}-units`, compact(t.computeUnits), 'compute units'),
    stat(`${id}-errors`, errorsText(t), 'errors (share of requests)'),
    stat(`${id}-p50`, latencyText(r.latency.p50Ms, t.requests), 'median latency'),
    stat(`${id}-p99`, latencyText(r.latency.p99Ms, t.requests), 'p99 latency'));
}

/**
 * One breakdown (by key, by network, by account) as a table with the same figures per row.
 * @template {Timed} T
 * @param {{ id: string, caption: string, head: string, rows: T[], name: (row: T) => import('../lib/dom.js').Child }} o
 */
export function breakdown(o) {
  return cardTable({
    id: o.id, caption: o.caption, empty: 'No requests.', rows: o.rows,
    columns: [
      { title: o.head, class: 'wrap-anywhere', cell: o.name },
      { title: 'Requests', cell: (x) => fmt(x.requests) },
      { title: 'Compute units', cell: (x) => compact(x.computeUnits) },
      { title: 'Errors', cell: (x) => errorsText(x) },
      { title: 'Median', cell: (x) => latencyText(x.p50Ms, x.requests) },
      { title: 'p99', cell: (x) => latencyText(x.p99Ms, x.requests) },
    ],
  });
}

/**
 * The last 24 hours and this month of the account (or of one key), each with its breakdowns.
 * @param {{ keyId?: string, keyNames?: Map<string, string>, id: string }} o
 */
export async function periods(o) {
  const s = since();
  const read = (/** @type {string} */ from) => /** @type {Promise<UsageReport>} */ (api('GET', `/analytics${query({ from, keyId: o.keyId })}`));
  const [day, month] = await Promise.all([read(s.day), read(s.month)]);
  /** @param {UsageReport} r @param {string} id @param {string} title */
  const section = (r, id, title) => h('section', { class: 'card', 'aria-labelledby': `${id}-h` },
    h('h2', { id: `${id}-h` }, title), statCards(r, id),
    o.keyId ? null : h('h3', {}, 'By key'),
    o.keyId ? null : breakdown({ id: `${id}-by-key`, caption: `${title}: by key`, head: 'Key', rows: r.byKey, name: (k) => keyLink(k.keyId, o.keyNames) }),
    h('h3', {}, 'By network'),
    breakdown({ id: `${id}-by-network`, caption: `${title}: by network`, head: 'Network', rows: r.byNetwork, name: (n) => n.network }));
  return { day, month, el: h('div', { id: o.id }, section(day, `${o.id}-day`, 'Last 24 hours'), section(month, `${o.id}-month`, `This month (${s.month.slice(0, 7)}, UTC)`)) };
}

/** A key's name linking to its page; the groups of pruned keys and overflow as words. @param {string} id @param {Map<string, string>} [names] */
function keyLink(id, names) {
  if (id === '(revoked)') return 'revoked keys (removed)';
  if (id === '(other)') return 'other keys';
  const name = names?.get(id);
  return name === undefined ? id : h('a', { href: `#/keys/${encodeURIComponent(id)}` }, name);
}

/**
 * The plan and its limits in words, and the month's quota: "1,234 of 30 million compute units (less than 0.01 %)".
 * @param {import('../lib/types.js').Plan} plan
 * @param {{ used: number, limit: number } | undefined} quota
 * @param {import('../lib/types.js').Facts} facts
 */
export function planCard(plan, quota, facts) {
  const limits = facts.planLimits.filter((l) => l.name !== 'cuPerMonth').map((l) => {
    const v = plan[l.name];
    return h('li', {}, `${capital(l.label)}: `, h('strong', {}, typeof v === 'boolean' ? (v ? 'included' : 'not included') : compact(Number(v))));
  });
  const used = quota?.used ?? 0;
  const limit = quota?.limit ?? plan.cuPerMonth;
  const share = limit > 0 ? (100 * used) / limit : 0;
  const quotaLine = limit >= 1e15
    ? `${fmt(used)} compute units used this month; the quota is unlimited.`
    : `${compact(used)} of ${quotaWords(limit)} compute units used this month (${share === 0 ? '0' : share < 0.01 ? 'less than 0.01' : share.toFixed(share < 10 ? 2 : 1)} %).`;
  return h('section', { class: 'card', 'aria-labelledby': 'plan-h' },
    h('h2', { id: 'plan-h' }, `Plan: ${plan.name}`),
    h('p', { id: 'plan-quota' }, quotaLine),
    h('ul', { id: 'plan-limits' }, ...limits));
}
