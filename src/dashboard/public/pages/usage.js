// @ts-check
// Usage: filters (key, network, method, status; the operator's also the account), ranges up to 30 days, live
// refresh, the month's quota, charts with names and their values as tables, error codes with their meaning, and a CSV
// export of the same selection; the operator's usage per account, each linking to that account's. The filters stay as
// chosen while the numbers below them are redrawn, and are kept in the page's address (a reload or a shared link
// shows the same selection). The method filter applies as one types.
import { barChart, lineChart } from '../components/chart.js';
import { failed } from '../components/notice.js';
import { quotaBar } from '../components/quota.js';
import { cardTable } from '../components/table.js';
import { api, ApiFailure, query } from '../lib/api.js';
import { fmt, h } from '../lib/dom.js';
import { loadNetworks } from '../lib/endpoints.js';
import { meaningOf } from '../lib/facts.js';
import { breakdown, errorRate, latencyText } from '../components/usage-summary.js';

/** @typedef {import('../lib/types.js').UsageReport} UsageReport */

const RANGES = /** @type {const} */ ([['1h', 'Last hour', 3_600_000], ['24h', 'Last 24 hours', 86_400_000], ['7d', 'Last 7 days', 7 * 86_400_000], ['30d', 'Last 30 days', 30 * 86_400_000]]);
const LIVE_MS = 10_000;
/** Typing pauses this long before the method filter applies. */
const TYPING_MS = 400;
/** What the usage rows record under names that are not methods, said in words (and never offered as methods). */
const NOT_METHODS = new Map([['(refused)', 'refused before the method was read'], ['(invalid)', 'not a valid JSON-RPC request'], ['(other)', 'other methods'], ['eth_subscription', 'subscription notifications sent']]);

/**
 * @param {string} id @param {string} label @param {HTMLElement} control
 */
const labelled = (id, label, control) => { control.id = id; return h('div', { class: 'field' }, h('label', { for: id }, label), control); };

/** @param {import('../lib/context.js').Ctx} ctx @param {boolean} [operator] everyone's usage @returns {Promise<import('../lib/context.js').Page>} */
export async function usagePage(ctx, operator = false) {
  const [networks, keys, accounts] = await Promise.all([
    loadNetworks(),
    operator ? Promise.resolve([]) : api('GET', '/keys?limit=100').then((r) => /** @type {{ keys: import('../lib/types.js').ApiKey[] }} */ (r).keys).catch(() => []),
    operator ? api('GET', '/operator/accounts').then((r) => /** @type {{ accounts: import('../lib/types.js').Account[] }} */ (r).accounts).catch(() => []) : Promise.resolve([]),
  ]);
  const nameOfAccount = new Map(accounts.map((a) => [a.id, `${a.name} (${a.email})`]));
  const account = h('select', {}, h('option', { value: '' }, 'All accounts'), ...accounts.map((a) => h('option', { value: a.id, selected: ctx.query.get('accountId') === a.id }, `${a.name} (${a.email})`)));
  const nameOfKey = new Map(keys.map((k) => [k.id, k.name]));
  const range = h('select', {}, ...RANGES.map(([v, label]) => h('option', { value: v, selected: v === (ctx.query.get('range') ?? '24h') }, label)));
  const key = h('select', {}, h('option', { value: '' }, 'All keys'), ...keys.map((k) => h('option', { value: k.id, selected: ctx.query.get('keyId') === k.id }, k.name)));
  const network = h('select', {}, h('option', { value: '' }, 'All networks'), ...networks.map((n) => h('option', { value: n.name, selected: ctx.query.get('network') === n.name }, n.name)));
  const method = h('input', { type: 'text', placeholder: 'e.g. eth_call', list: 'known-methods', autocomplete: 'off', value: ctx.query.get('method') ?? '' });
  const methods = h('datalist', { id: 'known-methods' });
  const status = h('select', {}, h('option', { value: '' }, 'Any outcome'), h('option', { value: 'ok' }, 'Successful'), h('option', { value: 'error' }, 'Failed (any error)'),
    ...ctx.facts.errorCodes.map((c) => h('option', { value: String(c.code) }, `${c.code}: ${c.name}`)));
  status.value = ctx.query.get('status') ?? '';
  const live = h('input', { type: 'checkbox', id: 'live' });
  const note = h('p', { class: 'notice', hidden: true, role: 'status' });
  const csv = h('a', { id: 'csv', class: 'button secondary', download: '' }, 'Export CSV');
  const updated = h('span', { class: 'muted', role: 'status', id: 'updated' });
  const report = h('div', { id: 'report', 'aria-live': 'polite', 'aria-busy': 'false' });

  /** The filters as the API's query. */
  const filters = () => {
    const span = RANGES.find(([v]) => v === range.value)?.[2] ?? 86_400_000;
    return {
      from: new Date(Date.now() - span).toISOString(), keyId: operator ? undefined : key.value || undefined, accountId: operator ? account.value || undefined : undefined,
      network: network.value || undefined, method: method.value.trim() || undefined, status: status.value || undefined,
    };
  };
  /** The selection as the page's address: a reload, the back button or a shared link shows the same. */
  const remember = () => {
    const chosen = { range: range.value, keyId: operator ? undefined : key.value, accountId: operator ? account.value : undefined, network: network.value, method: method.value.trim(), status: status.value };
    history.replaceState(null, '', `#/${operator ? 'operator/usage' : 'usage'}${query(chosen)}`);
  };
  let loading = false;
  // A change while a load runs is not lost: one more load follows, with the filters as they are then.
  let again = false;
  const load = async () => {
    if (loading) { again = true; return; }
    loading = true;
    again = false;
    report.setAttribute('aria-busy', 'true');
    const f = filters();
    remember();
    const base = operator ? '/operator/analytics' : '/analytics';
    csv.setAttribute('href', `/api/v1${base}.csv${query(f)}`);
    try {
      let r;
      try {
        r = /** @type {UsageReport} */ (await api('GET', `${base}${query(f)}`));
        note.hidden = true;
      } catch (err) {
        // A gateway without the method and status filters refuses them by name: say so, show the rest.
        if (!(err instanceof ApiFailure && (err.field === 'method' || err.field === 'status'))) throw err;
        note.textContent = 'Filtering by method or outcome needs a newer Nodegate on this gateway; showing the usage without those filters.';
        note.hidden = false;
        r = /** @type {UsageReport} */ (await api('GET', `${base}${query({ ...f, method: undefined, status: undefined })}`));
      }
      methods.replaceChildren(...r.byMethod.filter((m) => !NOT_METHODS.has(m.method)).map((m) => h('option', { value: m.method })));
      report.replaceChildren(...draw(r).filter((x) => x !== null));
      updated.textContent = `Updated ${new Date().toISOString().slice(11, 19)} UTC`;
    } catch (err) {
      report.replaceChildren(failed(err, 'The usage'));
    } finally {
      loading = false;
      report.setAttribute('aria-busy', 'false');
    }
    if (again) await load();
  };

  /** @param {UsageReport} r */
  const draw = (r) => {
    /** @param {string} id @param {string} value @param {string} label */
    const stat = (id, value, label) => h('div', { class: 'card stat' }, h('div', { class: 'value', id }, value), h('div', { class: 'label' }, label));
    const label = (/** @type {string} */ t) => (r.bucket === 'day' ? t.slice(5, 10) : r.bucket === 'hour' ? `${t.slice(5, 10)} ${t.slice(11, 16)}` : t.slice(11, 16));
    const errors = r.byCode.filter((c) => c.code !== 0);
    const bounds = r.latency.bucketsMs.map((b) => `up to ${fmt(b)} ms`).concat(`over ${fmt(r.latency.bucketsMs.at(-1))} ms`);
    return [
      h('div', { class: 'stats' }, stat('total-requests', fmt(r.totals.requests), 'requests'), stat('total-units', fmt(r.totals.computeUnits), 'compute units'),
        stat('total-errors', fmt(r.totals.errors), 'errors and refusals'), stat('error-rate', errorRate(r.totals), 'of requests failed'),
        stat('latency-avg', `${fmt(r.latency.avgMs)} ms`, 'average latency'),
        stat('latency-p50', latencyText(r.latency.p50Ms, r.totals.requests), 'median latency'), stat('latency-p99', latencyText(r.latency.p99Ms, r.totals.requests), 'p99 latency')),
      operator && r.byAccount && !account.value ? h('section', { class: 'card' }, h('h2', {}, 'By account'), breakdown({
        id: 'by-account', caption: 'Usage by account', head: 'Account', rows: r.byAccount,
        name: (a) => h('a', { href: `#/operator/usage${query({ range: range.value, accountId: a.accountId })}`, 'data-account-usage': a.accountId }, nameOfAccount.get(a.accountId) ?? a.accountId),
      })) : null,
      r.quota ? quotaBar(r.quota) : null,
      h('section', { class: 'card' }, h('h2', {}, `Requests per ${r.bucket}`), lineChart(r.series.map((s) => ({ label: label(s.t), value: s.requests })), { id: 'chart-requests', name: `Requests per ${r.bucket}`, unit: 'requests' })),
      h('section', { class: 'card' }, h('h2', {}, 'Errors and refusals by code'), cardTable({
        id: 'errors', caption: 'Errors by code, with what each means', empty: 'No errors in this selection.', rows: errors,
        columns: [{ title: 'Code', cell: (c) => h('code', {}, String(c.code)) }, { title: 'What it means', cell: (c) => meaningOf(ctx.facts, c.code) }, { title: 'Requests', cell: (c) => fmt(c.requests) }],
      })),
      h('section', { class: 'card' }, h('h2', {}, 'By method'), r.byMethod.length
        ? barChart(r.byMethod.map((m) => ({ label: NOT_METHODS.get(m.method) ?? m.method, value: m.requests })), { id: 'chart-methods', name: 'Requests by method', unit: 'requests', head: 'Method' })
        : h('p', { class: 'muted' }, 'No calls in this selection.')),
      operator ? null : h('section', { class: 'card' }, h('h2', {}, 'By key'), r.byKey.length
        ? barChart(r.byKey.map((k) => ({ label: nameOfKey.get(k.keyId) ?? k.keyId, value: k.requests })), { id: 'chart-keys', name: 'Requests by key', unit: 'requests', head: 'Key' })
        : h('p', { class: 'muted' }, 'No calls in this selection.')),
      h('section', { class: 'card' }, h('h2', {}, 'By network'), r.byNetwork.length
        ? barChart(r.byNetwork.map((n) => ({ label: n.network, value: n.requests })), { id: 'chart-networks', name: 'Requests by network', unit: 'requests', head: 'Network' })
        : h('p', { class: 'muted' }, 'No calls in this selection.')),
      h('section', { class: 'card' }, h('h2', {}, 'Latency'), barChart(bounds.map((b, i) => ({ label: b, value: r.latency.counts[i] })), { id: 'chart-latency', name: 'Calls by latency', unit: 'calls', head: 'Latency' })),
    ];
  };

  /** @type {ReturnType<typeof setInterval> | undefined} */
  let timer;
  live.addEventListener('change', () => {
    clearInterval(timer);
    if (live.checked) timer = setInterval(() => void load(), LIVE_MS);
  });
  ctx.onLeave(() => clearInterval(timer));
  for (const c of [range, key, network, status, account]) c.addEventListener('change', () => void load());
  // Applied as one types (after a short pause), and at once on Enter or when a suggestion is picked.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typing;
  let applied = method.value.trim();
  const applyMethod = () => {
    clearTimeout(typing);
    if (method.value.trim() === applied) return;
    applied = method.value.trim();
    void load();
  };
  method.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(applyMethod, TYPING_MS); });
  method.addEventListener('change', applyMethod);
  ctx.onLeave(() => clearTimeout(typing));
  const refresh = h('button', { type: 'button', class: 'secondary', id: 'refresh', onclick: () => void load() }, 'Refresh');

  await load();
  return {
    title: operator ? "Everyone's usage" : 'Usage',
    body: h('div', {},
      h('form', { class: 'card filters', 'aria-label': 'Filters', onsubmit: (/** @type {Event} */ ev) => { ev.preventDefault(); void load(); } },
        labelled('range', 'Range', range), operator ? labelled('filter-account', 'Account', account) : labelled('filter-key', 'Key', key), labelled('filter-network', 'Network', network),
        labelled('filter-method', 'Method', method), methods, labelled('filter-status', 'Outcome', status),
        h('div', { class: 'field actions' }, refresh, h('label', { class: 'check', for: 'live' }, live, ` Live (every ${LIVE_MS / 1000} s)`), csv, updated)),
      note, report),
  };
}
