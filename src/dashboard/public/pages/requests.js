// @ts-check
// Requests: the request explorer. A search box for a request id (the X-Request-Id a client got), filters (key,
// network, method, outcome, range), the matching requests newest first in a table, older ones a page at a time, and
// a row's details (its params and error, cut as the gateway keeps them) opened from the row.
import { failed } from '../components/notice.js';
import { cardTable } from '../components/table.js';
import { api, query } from '../lib/api.js';
import { fmt, h } from '../lib/dom.js';
import { loadNetworks } from '../lib/endpoints.js';
import { meaningOf } from '../lib/facts.js';

/**
 * @typedef {object} RequestRecord
 * @property {string} id @property {string} at @property {string} accountId @property {string} keyId
 * @property {string | null} keyName @property {string} network @property {string} method @property {number} code
 * @property {string | null} message @property {number} latencyMs @property {number} computeUnits
 * @property {number} requestBytes @property {number} responseBytes @property {string | null} cache
 * @property {string | null} node @property {string} requestId @property {string | null} params @property {number} sampleEvery
 */

const RANGES = /** @type {const} */ ([['1h', 'Last hour', 3_600_000], ['24h', 'Last 24 hours', 86_400_000], ['7d', 'Last 7 days', 7 * 86_400_000], ['all', 'Everything kept', 0]]);

/** @param {string} id @param {string} label @param {HTMLElement} control */
const labelled = (id, label, control) => { control.id = id; return h('div', { class: 'field' }, h('label', { for: id }, label), control); };

/** @param {import('../lib/context.js').Ctx} ctx @param {boolean} [operator] every account's @returns {Promise<import('../lib/context.js').Page>} */
export async function requestsPage(ctx, operator = false) {
  const [networks, keys] = await Promise.all([
    loadNetworks(),
    operator ? Promise.resolve([]) : api('GET', '/keys?limit=100').then((r) => /** @type {{ keys: import('../lib/types.js').ApiKey[] }} */ (r).keys).catch(() => []),
  ]);
  const requestId = h('input', { type: 'search', placeholder: 'X-Request-Id of the response', autocomplete: 'off', value: ctx.query.get('requestId') ?? '' });
  const range = h('select', {}, ...RANGES.map(([v, label]) => h('option', { value: v, selected: v === '24h' }, label)));
  const key = h('select', {}, h('option', { value: '' }, 'All keys'), ...keys.map((k) => h('option', { value: k.id }, k.name)));
  const network = h('select', {}, h('option', { value: '' }, 'All networks'), ...networks.map((n) => h('option', { value: n.name }, n.name)));
  const method = h('input', { type: 'text', placeholder: 'e.g. eth_call', autocomplete: 'off' });
  const outcome = h('select', {}, h('option', { value: '' }, 'Any outcome'), h('option', { value: 'ok' }, 'Successful'), h('option', { value: 'error' }, 'Failed (any error)'),
    ...ctx.facts.errorCodes.map((c) => h('option', { value: String(c.code) }, `${c.code}: ${c.name}`)));
  const list = h('div', { id: 'requests', 'aria-live': 'polite', 'aria-busy': 'false' });
  const details = h('section', { class: 'card', id: 'request-details', hidden: true, tabindex: -1, 'aria-labelledby': 'request-details-title' });
  const more = h('button', { type: 'button', class: 'secondary', id: 'older', hidden: true }, 'Older requests');
  /** @type {RequestRecord[]} */
  let rows = [];
  /** @type {string | null} */
  let cursor = null;

  const filters = () => {
    const span = RANGES.find(([v]) => v === range.value)?.[2] ?? 0;
    const id = requestId.value.trim();
    // A request id names one request: the other filters would only hide it.
    if (id) return { requestId: id };
    return { from: span ? new Date(Date.now() - span).toISOString() : undefined, keyId: key.value || undefined, network: network.value || undefined, method: method.value.trim() || undefined, outcome: outcome.value || undefined };
  };
  /** The latest load: an earlier one answered after it (the first list, then a search) draws nothing. */
  let loads = 0;
  /** @param {boolean} older the next page of the same selection */
  const load = async (older = false) => {
    const mine = ++loads;
    list.setAttribute('aria-busy', 'true');
    try {
      const page = /** @type {{ requests: RequestRecord[], nextCursor: string | null }} */ (await api('GET', `${operator ? '/operator/requests' : '/requests'}${query({ ...filters(), limit: '50', cursor: older && cursor ? cursor : undefined })}`));
      if (mine !== loads) return;
      rows = older ? rows.concat(page.requests) : page.requests;
      cursor = page.nextCursor;
      if (!older) details.hidden = true;
      draw();
    } catch (err) {
      if (mine !== loads) return;
      list.replaceChildren(failed(err, 'The requests'));
      more.hidden = true;
    } finally {
      if (mine === loads) list.setAttribute('aria-busy', 'false');
    }
  };
  const draw = () => {
    list.replaceChildren(cardTable({
      id: 'requests-table', caption: 'Recorded requests, newest first', empty: 'No recorded request matches.', rows,
      columns: [
        { title: 'Time', cell: (r) => h('span', { class: 'mono' }, `${r.at.slice(0, 10)} ${r.at.slice(11, 23)}`) },
        ...(operator ? [{ title: 'Account', cell: (/** @type {RequestRecord} */ r) => h('code', { class: 'wrap' }, r.accountId) }] : []),
        { title: 'Key', cell: (r) => r.keyName ?? h('code', { class: 'wrap' }, r.keyId) },
        { title: 'Network', cell: (r) => r.network },
        { title: 'Method', cell: (r) => h('code', { class: 'wrap' }, r.method) },
        { title: 'Outcome', cell: (r) => (r.code === 0 ? 'ok' : h('span', {}, h('code', {}, String(r.code)), ` ${meaningOf(ctx.facts, r.code)}`)) },
        { title: 'Latency', cell: (r) => `${fmt(Math.round(r.latencyMs))} ms` },
        { title: 'Units', cell: (r) => fmt(r.computeUnits) },
        { title: 'Node', cell: (r) => r.node ?? (r.cache === 'HIT' ? 'cache' : 'gateway') },
        { title: 'Details', cell: (r) => h('button', { type: 'button', class: 'link', 'aria-controls': 'request-details', onclick: () => show(r) }, 'Show', h('span', { class: 'visually-hidden' }, ` request ${r.requestId}`)) },
      ],
    }));
    more.hidden = cursor === null;
  };
  /** @param {RequestRecord} r */
  const show = (r) => {
    /** @param {string} t @param {import('../lib/dom.js').Child} v */
    const fact = (t, v) => [h('dt', {}, t), h('dd', {}, v)];
    details.replaceChildren(
      h('h2', { id: 'request-details-title' }, `${r.method} at ${r.at.replace('T', ' ').slice(0, 23)} UTC`),
      h('dl', { class: 'facts' },
        ...fact('Request id', h('code', { class: 'wrap' }, r.requestId)),
        ...fact('Key', r.keyName ?? r.keyId), ...fact('Network', r.network),
        ...fact('Outcome', r.code === 0 ? 'ok' : `${r.code}: ${meaningOf(ctx.facts, r.code)}`),
        ...fact('Latency', `${r.latencyMs} ms`), ...fact('Compute units', fmt(r.computeUnits)),
        ...fact('Sizes', `${fmt(r.requestBytes)} bytes asked (the whole body), ${fmt(r.responseBytes)} bytes answered`),
        ...fact('Cache', r.cache ?? 'not cached'), ...fact('Node', r.node ?? 'none: the gateway answered'),
        ...(r.sampleEvery > 1 ? fact('Sampled', `1 in ${r.sampleEvery} of this account's calls of that minute were kept`) : [])),
      h('h3', {}, 'Error'), r.message === null ? h('p', { class: 'muted' }, 'None: answered with a result.') : h('pre', {}, r.message),
      h('h3', {}, 'Params'), r.params === null ? h('p', { class: 'muted' }, 'None were read.') : h('pre', {}, r.params),
      h('p', { class: 'muted' }, 'Params and errors are kept cut to a few hundred characters.'));
    details.hidden = false;
    details.focus();
  };

  for (const c of [range, key, network, outcome]) c.addEventListener('change', () => void load());
  method.addEventListener('change', () => void load());
  more.addEventListener('click', () => void load(true));
  await load();
  return {
    title: operator ? "Everyone's requests" : 'Requests',
    body: h('div', {},
      h('form', { class: 'card filters', role: 'search', 'aria-label': 'Find requests', onsubmit: (/** @type {Event} */ ev) => { ev.preventDefault(); void load(); } },
        labelled('request-id', 'Request id', requestId), labelled('filter-range', 'Range', range), operator ? null : labelled('filter-key', 'Key', key),
        labelled('filter-network', 'Network', network), labelled('filter-method', 'Method', method), labelled('filter-outcome', 'Outcome', outcome),
        h('div', { class: 'field actions' }, h('button', { type: 'submit', id: 'find' }, 'Find'))),
      list, more, details,
      h('p', { class: 'muted' }, 'Each request of your keys is kept for a time and a number your plan sets; past its share of a minute, 1 call in 100 is kept.')),
  };
}
