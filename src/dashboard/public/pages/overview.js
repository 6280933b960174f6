// @ts-check
// Overview: the account's numbers first (its plan and limits in words, the month's quota, the last 24 hours and this
// month per key and per network), then every network's endpoints, HTTP(S) and WebSocket, with ready-to-paste
// snippets for viem and ethers. With a key made in this tab the URLs are complete; otherwise they end in YOUR_KEY
// and point to the keys page.
import { copyBox, snippet } from '../components/copy.js';
import { failed } from '../components/notice.js';
import { periods, planCard } from '../components/usage-summary.js';
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { endpointLabel, httpUrl, loadNetworks, rememberedKey, wsUrl } from '../lib/endpoints.js';

/** @param {import('../lib/context.js').Ctx} ctx */
async function numbers(ctx) {
  try {
    const [account, keys] = await Promise.all([
      /** @type {Promise<import('../lib/types.js').Account & { plan: import('../lib/types.js').Plan }>} */ (api('GET', '/account')),
      /** @type {Promise<{ keys: import('../lib/types.js').ApiKey[] }>} */ (api('GET', '/keys?limit=100')),
    ]);
    const p = await periods({ id: 'usage-summary', keyNames: new Map(keys.keys.map((k) => [k.id, k.name])) });
    return h('div', {}, planCard(account.plan, p.month.quota, ctx.facts), p.el);
  } catch (err) {
    return failed(err, 'Your numbers');
  }
}

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function overviewPage(ctx) {
  const [networks, figures] = await Promise.all([loadNetworks(), numbers(ctx)]);
  const key = rememberedKey();
  const value = key?.value ?? 'YOUR_KEY';
  const intro = key
    ? h('p', {}, `These URLs carry the key “${key.name}” you just made (kept in this tab only; after a reload they show YOUR_KEY again).`)
    : h('p', {}, 'Put your key at the end of each URL. ', h('a', { href: '#/keys' }, 'Make a key'), ' to get complete URLs to copy (a key is shown once, when made).');
  return {
    title: 'Overview',
    body: h('div', {}, figures, h('h2', {}, 'Endpoints'), intro, ...networks.map((n) => {
      const http = httpUrl(n, value);
      const ws = wsUrl(n, value);
      return h('section', { class: 'card', 'aria-labelledby': `net-${n.name}` },
        h('h2', { id: `net-${n.name}` }, `${n.name}`, h('span', { class: 'muted' }, ` · chain id ${n.chainId}${n.aliases.length ? ` · also ${n.aliases.join(', ')}` : ''}`)),
        copyBox({ label: `${endpointLabel(http)} endpoint`, value: http, id: `http-${n.name}`, what: `${endpointLabel(http)} URL of ${n.name}` }),
        copyBox({ label: 'WebSocket endpoint', value: ws, id: `ws-${n.name}`, what: `WebSocket URL of ${n.name}` }),
        h('details', {}, h('summary', {}, `Snippets for ${n.name}`),
          snippet('curl', `curl -s -X POST -H 'content-type: application/json' \\\n  --data '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' \\\n  ${http}`, n.name),
          snippet('viem (HTTP)', `import { createPublicClient, http } from 'viem';\n\nconst client = createPublicClient({ transport: http('${http}') });\nconsole.log(await client.getBlockNumber());`, n.name),
          snippet('viem (WebSocket)', `import { createPublicClient, webSocket } from 'viem';\n\nconst client = createPublicClient({ transport: webSocket('${ws}') });\nclient.watchBlocks({ onBlock: (block) => console.log(block.number) });`, n.name),
          snippet('ethers (HTTP)', `import { JsonRpcProvider } from 'ethers';\n\nconst provider = new JsonRpcProvider('${http}');\nconsole.log(await provider.getBlockNumber());`, n.name),
          snippet('ethers (WebSocket)', `import { WebSocketProvider } from 'ethers';\n\nconst provider = new WebSocketProvider('${ws}');\nprovider.on('block', (n) => console.log(n));`, n.name)));
    })),
  };
}
