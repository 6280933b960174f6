// The Nodegate dashboard: one page, no framework, no build step, nothing loaded from elsewhere. It talks to the
// management API (/api/v1) with the session cookie, and sends the session's CSRF token with every change.
// Everything a user typed reaches the page as text nodes (h() below), never as HTML.
import { barChart, lineChart } from './chart.js';

const state = { account: null, csrf: null };
const main = document.getElementById('main');
const nav = document.getElementById('nav');

/** An element: `h('td', { class: 'x' }, 'text', child)`. Strings become text nodes. */
function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'value') e.value = v;
    else if (k === 'style') e.style.cssText = v; // through the CSSOM: the page's CSP allows no style attributes
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}

class ApiFailure extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = {};
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    if (state.csrf) headers['x-csrf-token'] = state.csrf;
  }
  const res = await fetch(`/api/v1${path}`, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    if (res.status === 401 && path !== '/session') return showLogin('Your session has ended; log in again.');
    throw new ApiFailure(res.status, data);
  }
  return data;
}

const fmt = (n) => Number(n ?? 0).toLocaleString('en-US');
const when = (iso) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');
const lines = (text) => text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
const errorBox = () => h('div', { class: 'error', role: 'alert' });
async function guarded(box, fn) {
  box.textContent = '';
  try { await fn(); } catch (err) { box.textContent = err.message; }
}
function copyButton(text, id) {
  return h('button', {
    class: 'secondary', type: 'button', id,
    onclick: async (ev) => {
      await navigator.clipboard.writeText(text);
      ev.target.textContent = 'Copied';
    },
  }, 'Copy');
}

// Login ----------------------------------------------------------------------------------------------------

function showLogin(message) {
  state.account = null;
  state.csrf = null;
  nav.hidden = true;
  document.getElementById('who').textContent = '';
  const err = errorBox();
  if (message) err.textContent = message;
  const email = h('input', { id: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const form = h('form', {
    class: 'card login',
    onsubmit: (ev) => {
      ev.preventDefault();
      guarded(err, async () => {
        const r = await api('POST', '/session', { email: email.value, password: password.value });
        if (r) signedIn(r);
      });
    },
  }, h('h1', {}, 'Log in'), h('label', { for: 'email' }, 'Email'), email, h('label', { for: 'password' }, 'Password'), password,
  h('p', {}, h('button', { type: 'submit', id: 'login' }, 'Log in')), err);
  main.replaceChildren(form);
}

function signedIn(r) {
  state.account = r.account;
  state.csrf = r.csrfToken;
  document.getElementById('who').textContent = `${r.account.email}${r.account.role === 'operator' ? ' (operator)' : ''}`;
  const links = [['keys', 'API keys'], ['endpoints', 'Endpoints'], ['usage', 'Usage'], ['webhooks', 'Webhooks']];
  if (r.account.role === 'operator') links.push(['accounts', 'Accounts'], ['plans', 'Plans'], ['networks', 'Networks'], ['all-usage', "Everyone's usage"]);
  links.push(['password', 'Password']);
  nav.replaceChildren(...links.map(([id, label]) => h('a', { href: `#${id}`, id: `nav-${id}` }, label)),
    h('a', { href: '#', id: 'logout', onclick: async (ev) => { ev.preventDefault(); await api('DELETE', '/session'); showLogin('Logged out.'); } }, 'Log out'));
  nav.hidden = false;
  if (!location.hash) location.hash = '#keys';
  route();
}

// Keys -----------------------------------------------------------------------------------------------------

const PERMISSIONS = ['rpc', 'webhooks', 'analytics', 'admin'];

async function keysView() {
  const page = await api('GET', '/keys?limit=100');
  const err = errorBox();
  const created = h('div');
  const table = h('table', { id: 'keys' },
    h('thead', {}, h('tr', {}, ...['Name', 'Type', 'Permissions', 'Prefix', 'Networks', 'Created', 'Last used', 'Status', ''].map((t) => h('th', {}, t)))),
    h('tbody', {}, ...page.keys.map((k) => keyRow(k, err))));
  main.replaceChildren(h('h1', {}, 'API keys'), err, created, newKeyForm(created, err), h('h2', {}, 'Your keys'),
    page.keys.length ? table : h('p', { class: 'muted' }, 'No keys yet.'));
}

function keyStatus(k) {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}

function keyRow(k, err) {
  const status = keyStatus(k);
  const edit = h('button', { class: 'secondary', type: 'button', onclick: () => row.after(allowlistEditor(k, err)) }, 'Edit allowlists');
  const revoke = h('button', {
    class: 'danger', type: 'button', 'data-revoke': k.id,
    onclick: () => guarded(err, async () => {
      if (!confirm(`Revoke the key "${k.name}"? Requests with it are refused from now on; this cannot be undone.`)) return;
      await api('POST', `/keys/${encodeURIComponent(k.id)}/revoke`);
      await keysView();
    }),
  }, 'Revoke');
  const row = h('tr', { 'data-key': k.id },
    h('td', { class: 'key-name' }, k.name), h('td', {}, k.type), h('td', {}, k.permissions.join(', ')), h('td', {}, h('code', {}, `${k.prefix}…`)),
    h('td', {}, k.networkAllowlist.length ? k.networkAllowlist.join(', ') : 'all'), h('td', {}, when(k.createdAt)), h('td', {}, when(k.lastUsedAt)),
    h('td', { class: `status-${status}` }, status), h('td', {}, status === 'active' ? [edit, revoke] : ''));
  return row;
}

function allowlistEditor(k, err) {
  const fields = {
    ipAllowlist: h('textarea', { 'aria-label': 'IP allowlist' }, k.ipAllowlist.join('\n')),
    originAllowlist: h('textarea', { 'aria-label': 'Origin allowlist' }, k.originAllowlist.join('\n')),
    networkAllowlist: h('textarea', { 'aria-label': 'Network allowlist' }, k.networkAllowlist.join('\n')),
    methodAllowlist: h('textarea', { 'aria-label': 'Method allowlist' }, k.methodAllowlist.join('\n')),
  };
  const save = h('button', {
    type: 'button',
    onclick: () => guarded(err, async () => {
      await api('PATCH', `/keys/${encodeURIComponent(k.id)}`, Object.fromEntries(Object.entries(fields).map(([f, t]) => [f, lines(t.value)])));
      await keysView();
    }),
  }, 'Save allowlists');
  return h('tr', {}, h('td', { colspan: 9 }, h('div', { class: 'card' },
    h('label', {}, 'IP addresses and CIDRs (one per line; empty: any)'), fields.ipAllowlist,
    h('label', {}, 'Origins'), fields.originAllowlist, h('label', {}, 'Networks'), fields.networkAllowlist,
    h('label', {}, 'Methods'), fields.methodAllowlist, h('p', {}, save))));
}

function newKeyForm(created, err) {
  const name = h('input', { id: 'key-name', required: true, maxlength: 200 });
  const type = h('select', { id: 'key-type' }, ...['Standard', 'Restricted', 'Dedicated'].map((t) => h('option', { value: t }, t)));
  const perms = PERMISSIONS.map((p) => h('input', { type: 'checkbox', value: p, id: `perm-${p}` }));
  const permBox = h('div', { class: 'checks', hidden: true }, ...perms.map((c) => h('label', {}, c, c.value)));
  type.addEventListener('change', () => { permBox.hidden = type.value !== 'Restricted'; });
  const ip = h('textarea', { id: 'key-ips', placeholder: '203.0.113.7\n10.0.0.0/8' });
  const origins = h('textarea', { id: 'key-origins', placeholder: 'https://app.example' });
  const networks = h('input', { id: 'key-networks', placeholder: 'mainnet, testnet' });
  const methods = h('input', { id: 'key-methods', placeholder: 'eth_call, eth_getLogs' });
  const expires = h('input', { id: 'key-expires', type: 'date' });
  return h('form', {
    class: 'card', id: 'new-key',
    onsubmit: (ev) => {
      ev.preventDefault();
      guarded(err, async () => {
        const body = { name: name.value, type: type.value, ipAllowlist: lines(ip.value), originAllowlist: lines(origins.value), networkAllowlist: lines(networks.value), methodAllowlist: lines(methods.value) };
        if (type.value === 'Restricted') body.permissions = perms.filter((c) => c.checked).map((c) => c.value);
        if (expires.value) body.expiresAt = new Date(`${expires.value}T23:59:59Z`).toISOString();
        const key = await api('POST', '/keys', body);
        await keysView();
        main.querySelector('#created-slot')?.remove();
        main.insertBefore(h('div', { class: 'card once', id: 'created-slot' },
          h('strong', {}, `Key "${key.name}" created. Copy it now: it is shown this once and never again.`),
          h('pre', {}, h('code', { id: 'new-key-value' }, key.value)), copyButton(key.value, 'copy-key')), main.children[1]);
      });
    },
  }, h('h2', {}, 'Create a key'), h('label', { for: 'key-name' }, 'Name'), name, h('label', { for: 'key-type' }, 'Type'), type, permBox,
  h('label', { for: 'key-ips' }, 'IP allowlist (one per line; empty: any)'), ip, h('label', { for: 'key-origins' }, 'Origin allowlist'), origins,
  h('label', { for: 'key-networks' }, 'Networks (empty: all)'), networks, h('label', { for: 'key-methods' }, 'Methods (empty: all allowed)'), methods,
  h('label', { for: 'key-expires' }, 'Expires (optional)'), expires, h('p', {}, h('button', { type: 'submit', id: 'create-key' }, 'Create key')));
}

// Endpoints ------------------------------------------------------------------------------------------------

async function endpointsView() {
  const { networks } = await api('GET', '/networks');
  main.replaceChildren(h('h1', {}, 'Endpoints'), h('p', { class: 'muted' }, 'Append your key to the URL. Keys are on the API keys page; their values are shown only when made.'),
    ...networks.map((n) => {
      const url = `${n.url}YOUR_KEY`;
      const curl = `curl -s -X POST -H 'content-type: application/json' \\\n  --data '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' \\\n  ${url}`;
      const viem = `import { createPublicClient, http } from 'viem';\n\nconst client = createPublicClient({ transport: http('${url}') });\nconsole.log(await client.getBlockNumber());`;
      // The same path upgraded to a WebSocket (docs/websocket.md): subscriptions as well as calls.
      const wsUrl = url.replace(/^http/, 'ws');
      const viemWs = `import { createPublicClient, webSocket } from 'viem';\n\nconst client = createPublicClient({ transport: webSocket('${wsUrl}') });\nclient.watchBlocks({ onBlock: (block) => console.log(block.number) });`;
      const ethersWs = `import { WebSocketProvider } from 'ethers';\n\nconst provider = new WebSocketProvider('${wsUrl}');\nprovider.on('block', (n) => console.log(n));`;
      return h('div', { class: 'card' }, h('h2', {}, `${n.name} (chain id ${n.chainId})${n.aliases.length ? `, also ${n.aliases.join(', ')}` : ''}`),
        h('pre', {}, h('code', {}, url)), copyButton(url),
        h('h2', {}, 'curl'), h('pre', {}, h('code', {}, curl)), copyButton(curl),
        h('h2', {}, 'viem'), h('pre', {}, h('code', {}, viem)), copyButton(viem),
        h('h2', {}, 'WebSocket'), h('pre', {}, h('code', {}, wsUrl)), copyButton(wsUrl),
        h('h2', {}, 'viem over WebSocket'), h('pre', {}, h('code', {}, viemWs)), copyButton(viemWs),
        h('h2', {}, 'ethers over WebSocket'), h('pre', {}, h('code', {}, ethersWs)), copyButton(ethersWs));
    }));
}

// Usage ----------------------------------------------------------------------------------------------------

const RANGES = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 };

async function usageView(operator) {
  const range = h('select', { id: 'range' }, ...Object.keys(RANGES).map((r) => h('option', { value: r }, `last ${r}`)));
  const body = h('div');
  const load = async () => {
    const from = new Date(Date.now() - RANGES[range.value]).toISOString();
    const r = await api('GET', `${operator ? '/operator' : ''}/analytics?from=${encodeURIComponent(from)}`);
    body.replaceChildren(...usageReport(r));
  };
  range.addEventListener('change', load);
  main.replaceChildren(h('h1', {}, operator ? "Everyone's usage" : 'Usage'), h('p', {}, range, ' ', h('button', { class: 'secondary', type: 'button', id: 'refresh', onclick: load }, 'Refresh')), body);
  await load();
}

function usageReport(r) {
  const stat = (id, value, label) => h('div', { class: 'card stat' }, h('div', { class: 'value', id }, value), h('div', { class: 'label' }, label));
  const out = [h('div', { class: 'row' },
    stat('total-requests', fmt(r.totals.requests), 'requests'), stat('total-units', fmt(r.totals.computeUnits), 'compute units'),
    stat('total-errors', fmt(r.totals.errors), 'errors'), stat('latency-avg', `${fmt(r.latency.avgMs)} ms`, 'average latency'))];
  if (r.quota) {
    const pct = Math.min(100, (100 * r.quota.used) / r.quota.limit);
    out.push(h('div', { class: 'card' }, h('strong', {}, `Quota this month (${r.quota.month}, plan ${r.quota.plan}): `),
      h('span', { id: 'quota-used' }, `${fmt(r.quota.used)} of ${fmt(r.quota.limit)} compute units`),
      h('div', { class: 'bar' }, h('span', { style: `width:${pct.toFixed(2)}%` }))));
  }
  const label = (t) => (r.bucket === 'day' ? t.slice(5, 10) : t.slice(11, 16));
  out.push(h('div', { class: 'card' }, h('h2', {}, `Requests per ${r.bucket}`), lineChart(r.series.map((s) => ({ label: label(s.t), value: s.requests })), { id: 'chart-requests' })));
  out.push(h('div', { class: 'card' }, h('h2', {}, 'By method'), r.byMethod.length
    ? barChart(r.byMethod.map((m) => ({ label: m.method, value: m.requests })), { id: 'chart-methods' }) : h('p', { class: 'muted' }, 'No calls in this range.')));
  out.push(h('div', { class: 'card' }, h('h2', {}, 'Errors by code'), r.byCode.filter((c) => c.code !== 0).length
    ? h('table', { id: 'errors' }, h('tr', {}, h('th', {}, 'Code'), h('th', {}, 'Requests')), ...r.byCode.filter((c) => c.code !== 0).map((c) => h('tr', {}, h('td', {}, c.code), h('td', {}, fmt(c.requests)))))
    : h('p', { class: 'muted' }, 'No errors.')));
  const bounds = r.latency.bucketsMs.map((b) => `≤ ${b} ms`).concat(`> ${r.latency.bucketsMs.at(-1)} ms`);
  out.push(h('div', { class: 'card' }, h('h2', {}, 'Latency'), barChart(bounds.map((b, i) => ({ label: b, value: r.latency.counts[i] })), { id: 'chart-latency' })));
  return out;
}

// Webhooks -------------------------------------------------------------------------------------------------

async function webhooksView() {
  const [{ webhooks }, { networks }] = await Promise.all([api('GET', '/webhooks'), api('GET', '/networks')]);
  const err = errorBox();
  const network = h('select', { id: 'hook-network' }, ...networks.map((n) => h('option', { value: n.name }, n.name)));
  const kind = h('select', { id: 'hook-kind' }, ...['block.mined', 'logs'].map((k) => h('option', { value: k }, k)));
  const url = h('input', { id: 'hook-url', placeholder: 'https://hooks.example.com/nodegate' });
  const address = h('input', { id: 'hook-address', placeholder: 'logs only: a contract address (optional)' });
  const form = h('form', {
    class: 'card', id: 'new-webhook',
    onsubmit: (ev) => {
      ev.preventDefault();
      guarded(err, async () => {
        const w = await api('POST', '/webhooks', { network: network.value, kind: kind.value, url: url.value, options: address.value ? { address: address.value } : {} });
        await webhooksView();
        main.insertBefore(h('div', { class: 'card once', id: 'created-webhook' },
          h('strong', {}, 'Webhook created. Its signing secret is shown this once:'), h('pre', {}, h('code', { id: 'webhook-secret' }, w.secret)), copyButton(w.secret)), main.children[1]);
      });
    },
  }, h('h2', {}, 'Create a webhook'), h('label', {}, 'Network'), network, h('label', {}, 'Kind'), kind, h('label', {}, 'Target URL'), url, h('label', {}, 'Address'), address,
  h('p', {}, h('button', { type: 'submit', id: 'create-webhook' }, 'Create webhook')));
  const act = (w, path, label, cls = 'secondary') => h('button', { class: cls, type: 'button', onclick: () => guarded(err, async () => { await api('POST', `/webhooks/${encodeURIComponent(w.id)}/${path}`); await webhooksView(); }) }, label);
  const rows = webhooks.map((w) => h('tr', { 'data-webhook': w.id },
    h('td', {}, w.kind), h('td', {}, w.network), h('td', {}, h('code', {}, w.url)), h('td', { class: w.status === 'active' ? 'ok' : 'error' }, w.status, w.disabledReason ? ` (${w.disabledReason})` : ''),
    h('td', {}, act(w, 'test', 'Send test'), w.status === 'active' ? act(w, 'pause', 'Pause') : act(w, 'resume', 'Resume'),
      h('button', { class: 'secondary', type: 'button', onclick: () => guarded(err, () => deliveries(w)) }, 'Deliveries'),
      h('button', { class: 'danger', type: 'button', onclick: () => guarded(err, async () => { if (confirm('Delete this webhook and its undelivered events?')) { await api('DELETE', `/webhooks/${encodeURIComponent(w.id)}`); await webhooksView(); } }) }, 'Delete'))));
  main.replaceChildren(h('h1', {}, 'Webhooks'), err, form, webhooks.length
    ? h('table', { id: 'webhooks' }, h('tr', {}, ...['Kind', 'Network', 'Target', 'Status', ''].map((t) => h('th', {}, t))), ...rows)
    : h('p', { class: 'muted' }, 'No webhooks yet.'), h('div', { id: 'deliveries' }));
}

async function deliveries(w) {
  const { deliveries: list } = await api('GET', `/webhooks/${encodeURIComponent(w.id)}/deliveries?limit=50`);
  document.getElementById('deliveries').replaceChildren(h('h2', {}, `Deliveries of ${w.kind} → ${w.url}`), h('table', {},
    h('tr', {}, ...['Event', 'Type', 'Created', 'Status', 'Attempts', 'Last answer', 'Error'].map((t) => h('th', {}, t))),
    ...list.map((e) => h('tr', {}, h('td', {}, h('code', {}, e.id.slice(0, 16))), h('td', {}, e.type), h('td', {}, when(e.createdAt)),
      h('td', { class: e.status === 'delivered' ? 'ok' : 'muted' }, e.status), h('td', {}, e.attempts), h('td', {}, e.lastStatus ?? '—'), h('td', {}, e.lastError ?? '')))));
}

// Password -------------------------------------------------------------------------------------------------

function passwordView() {
  const err = errorBox();
  const done = h('p', { class: 'ok' });
  const current = h('input', { id: 'current-password', type: 'password', autocomplete: 'current-password' });
  const next = h('input', { id: 'new-password', type: 'password', autocomplete: 'new-password' });
  main.replaceChildren(h('h1', {}, 'Change password'), h('form', {
    class: 'card',
    onsubmit: (ev) => {
      ev.preventDefault();
      guarded(err, async () => {
        const r = await api('POST', '/session/password', { currentPassword: current.value, newPassword: next.value });
        state.csrf = r.csrfToken;
        done.textContent = 'Password changed. Other sessions of this account have ended.';
      });
    },
  }, h('label', {}, 'Current password'), current, h('label', {}, 'New password (at least 12 characters)'), next, h('p', {}, h('button', { type: 'submit' }, 'Change password')), err, done));
}

// Operator -------------------------------------------------------------------------------------------------

async function accountsView() {
  const [{ accounts }, { plans }] = await Promise.all([api('GET', '/operator/accounts'), api('GET', '/operator/plans')]);
  const err = errorBox();
  const planSelect = (value, attrs = {}) => h('select', attrs, ...plans.map((p) => h('option', { value: p.id, selected: p.id === value }, `${p.name} (${p.id})`)));
  const name = h('input', { id: 'account-name' });
  const email = h('input', { id: 'account-email', type: 'email' });
  const password = h('input', { id: 'account-password', type: 'password', autocomplete: 'new-password' });
  const plan = planSelect(undefined, { id: 'account-plan' });
  const form = h('form', {
    class: 'card', id: 'new-account',
    onsubmit: (ev) => {
      ev.preventDefault();
      guarded(err, async () => {
        await api('POST', '/operator/accounts', { name: name.value, email: email.value, planId: plan.value, ...(password.value ? { password: password.value } : {}) });
        await accountsView();
      });
    },
  }, h('h2', {}, 'Create an account'), h('label', {}, 'Name'), name, h('label', {}, 'Email'), email, h('label', {}, 'Password (optional: without one the account cannot log in)'), password,
  h('label', {}, 'Plan'), plan, h('p', {}, h('button', { type: 'submit', id: 'create-account' }, 'Create account')));
  const rows = accounts.map((a) => {
    const change = planSelect(a.planId, { 'data-plan-of': a.email, 'aria-label': `plan of ${a.email}` });
    change.addEventListener('change', () => guarded(err, async () => { await api('PATCH', `/operator/accounts/${encodeURIComponent(a.id)}`, { planId: change.value }); await accountsView(); }));
    const suspended = a.status === 'suspended';
    const toggle = h('button', {
      type: 'button', class: suspended ? '' : 'danger', 'data-status-of': a.email,
      onclick: () => guarded(err, async () => {
        if (!suspended && !confirm(`Suspend ${a.email}? Its keys and logins are refused from the next request.`)) return;
        await api('POST', `/operator/accounts/${encodeURIComponent(a.id)}/${suspended ? 'reactivate' : 'suspend'}`);
        await accountsView();
      }),
    }, suspended ? 'Reactivate' : 'Suspend');
    return h('tr', { 'data-account': a.email }, h('td', {}, a.name), h('td', {}, a.email), h('td', {}, a.role), h('td', {}, a.status), h('td', {}, change), h('td', {}, when(a.createdAt)), h('td', {}, toggle));
  });
  main.replaceChildren(h('h1', {}, 'Accounts'), err, form, h('table', { id: 'accounts' },
    h('tr', {}, ...['Name', 'Email', 'Role', 'Status', 'Plan', 'Created', ''].map((t) => h('th', {}, t))), ...rows));
}

/** The plan limits' one definition (src/config/plan-limits.ts), served by the gateway: the form and table follow it. */
let planLimits;
async function loadPlanLimits() {
  if (!planLimits) {
    const res = await fetch('/dashboard/plan-limits.json', { credentials: 'same-origin' });
    if (!res.ok) throw new ApiFailure(res.status);
    planLimits = await res.json();
  }
  return planLimits;
}

async function plansView(editing) {
  const [{ plans }, limits] = await Promise.all([api('GET', '/operator/plans'), loadPlanLimits()]);
  const err = errorBox();
  const numbers = limits.filter((l) => l.type !== 'boolean');
  const toggles = limits.filter((l) => l.type === 'boolean');
  const input = (l) => h('input', { id: `plan-${l.name}`, type: 'number', min: l.minimum, max: l.maximum, step: 1, placeholder: l.default ?? '', title: l.help });
  const f = { id: h('input', { id: 'plan-id' }), name: h('input', { id: 'plan-name' }), ...Object.fromEntries(numbers.map((l) => [l.name, input(l)])) };
  const checks = Object.fromEntries(toggles.map((l) => [l.name, h('input', { type: 'checkbox', id: `plan-${l.name}`, checked: l.default === true })]));
  const labelOf = Object.fromEntries([['id', 'Id'], ['name', 'Name'], ...limits.map((l) => [l.name, l.label[0].toUpperCase() + l.label.slice(1)])]);
  const num = (v) => (v === '' ? undefined : Number(v));
  // Editing a plan: the form holds its values; the id is fixed (accounts refer to it).
  const plan = plans.find((p) => p.id === editing);
  if (plan) {
    for (const [k, i] of Object.entries(f)) i.value = plan[k] ?? '';
    f.id.disabled = true;
    for (const [k, c] of Object.entries(checks)) c.checked = plan[k];
  }
  const form = h('form', {
    class: 'card', id: 'plan-form',
    onsubmit: (ev) => {
      ev.preventDefault();
      guarded(err, async () => {
        const values = Object.fromEntries(Object.entries({
          name: f.name.value,
          ...Object.fromEntries(numbers.map((l) => [l.name, num(f[l.name].value)])),
          ...Object.fromEntries(toggles.map((l) => [l.name, checks[l.name].checked])),
        }).filter(([, v]) => v !== undefined));
        if (plan) await api('PATCH', `/operator/plans/${encodeURIComponent(plan.id)}`, values);
        else await api('POST', '/operator/plans', { id: f.id.value, ...values });
        await plansView();
      });
    },
  }, h('h2', {}, plan ? `Change the plan ${plan.id} (effective on the next request)` : 'Create a plan'), ...Object.entries(f).flatMap(([k, i]) => [h('label', { for: i.id }, labelOf[k]), i]),
  h('div', { class: 'checks' }, ...toggles.map((l) => h('label', { title: l.help }, checks[l.name], labelOf[l.name]))),
  h('p', {}, h('button', { type: 'submit', id: plan ? 'save-plan' : 'create-plan' }, plan ? 'Save plan' : 'Create plan'), ' ',
    plan ? h('button', { type: 'button', onclick: () => plansView() }, 'Cancel') : ''));
  const cell = (l, p) => h('td', { 'data-limit': l.name }, l.type === 'boolean' ? (p[l.name] ? 'yes' : 'no') : fmt(p[l.name]));
  main.replaceChildren(h('h1', {}, 'Plans'), err, h('table', { id: 'plans' },
    h('tr', {}, ...['Id', 'Name', ...limits.map((l) => l.column), ''].map((t) => h('th', {}, t))),
    ...plans.map((p) => h('tr', { 'data-plan': p.id }, h('td', {}, p.id), h('td', {}, p.name), ...limits.map((l) => cell(l, p)),
      h('td', {}, h('button', { type: 'button', 'data-edit-plan': p.id, onclick: () => plansView(p.id) }, 'Edit'))))), form);
}

async function networksView() {
  const { networks } = await api('GET', '/operator/networks');
  main.replaceChildren(h('h1', {}, 'Networks'), ...networks.map((n) => h('div', { class: 'card' },
    h('h2', {}, `${n.name} (chain id ${n.chainId}, ${n.kind})`), h('pre', {}, h('code', {}, n.url)),
    h('table', { class: 'upstreams' }, h('tr', {}, ...['Upstream', 'Role', 'State', 'Chain id', 'Head', 'Lag', 'Breaker', 'Last error'].map((t) => h('th', {}, t))),
      ...n.upstreams.map((u) => h('tr', {}, h('td', {}, u.upstream), h('td', {}, u.role), h('td', { class: u.state === 'up' ? 'ok' : 'error' }, u.state),
        h('td', {}, u.chainId ?? '—'), h('td', {}, u.head ?? '—'), h('td', {}, u.lag ?? '—'), h('td', {}, u.breaker), h('td', {}, u.error ?? '')))))));
}

// Routing --------------------------------------------------------------------------------------------------

const VIEWS = {
  keys: keysView, endpoints: endpointsView, usage: () => usageView(false), password: passwordView, webhooks: webhooksView,
  accounts: accountsView, plans: plansView, networks: networksView, 'all-usage': () => usageView(true),
};

async function route() {
  if (!state.account) return;
  const view = location.hash.slice(1) || 'keys';
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.getAttribute('href') === `#${view}`);
  try {
    await (VIEWS[view] ?? keysView)();
  } catch (err) {
    main.replaceChildren(h('p', { class: 'error', role: 'alert' }, err.message));
  }
}

window.addEventListener('hashchange', route);
try {
  const r = await api('GET', '/session');
  if (r) signedIn(r);
} catch {
  showLogin();
}
