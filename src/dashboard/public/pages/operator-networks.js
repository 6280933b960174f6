// @ts-check
// Operator: networks with their endpoint and the state of each upstream.
import { cardTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';

/** @typedef {import('../lib/types.js').Endpoint & { upstreams: import('../lib/types.js').Upstream[] }} Network */

/** @returns {Promise<import('../lib/context.js').Page>} */
export async function operatorNetworksPage() {
  const { networks } = /** @type {{ networks: Network[] }} */ (await api('GET', '/operator/networks'));
  return {
    title: 'Networks',
    body: h('div', {}, ...networks.map((n) => h('section', { class: 'card', 'aria-labelledby': `onet-${n.name}` },
      h('h2', { id: `onet-${n.name}` }, n.name, h('span', { class: 'muted' }, ` · chain id ${n.chainId} · ${n.kind}`)),
      h('p', {}, h('code', { class: 'wrap' }, n.url)),
      cardTable({
        caption: `Upstreams of ${n.name}`, empty: 'No upstreams.', rows: n.upstreams,
        columns: [
          { title: 'Upstream', cell: (u) => h('code', { class: 'wrap' }, u.upstream) }, { title: 'Role', cell: (u) => u.role },
          { title: 'State', cell: (u) => h('span', { class: u.state === 'up' ? 'ok' : 'bad' }, u.state) },
          { title: 'Chain id', cell: (u) => String(u.chainId ?? '—') }, { title: 'Head', cell: (u) => String(u.head ?? '—') },
          { title: 'Lag', cell: (u) => String(u.lag ?? '—') }, { title: 'Breaker', cell: (u) => u.breaker }, { title: 'Last error', cell: (u) => u.error ?? '' },
        ],
      })))),
  };
}
