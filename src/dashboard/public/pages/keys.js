// @ts-check
// API keys: the list first (each key's rules in a few words, its page has the rest; revoke after a confirmation;
// revoked keys out of the list unless asked for), "New key" opening the form (then the complete HTTP(S) and WebSocket
// URLs, shown once, each with its own copy button, the focus on the first of them, and the form emptied and closed),
// and a revocation by what someone holds: a value found in a leaked file, or the prefix a log or list shows.
import { confirmDialog } from '../components/confirm.js';
import { copyBox } from '../components/copy.js';
import { createPanel } from '../components/create-panel.js';
import { Form } from '../components/form.js';
import { failed, readOnlyNote } from '../components/notice.js';
import { cardTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { focus, h, when } from '../lib/dom.js';
import { endpointLabel, httpUrl, loadNetworks, rememberKey, wsUrl } from '../lib/endpoints.js';
import { keyStatus } from '../lib/key-status.js';
import { keyFields, rulesOf, rulesSummary } from './key-fields.js';

/** @typedef {import('../lib/types.js').ApiKey} ApiKey */
/** @typedef {import('../lib/types.js').CreatedKey} CreatedKey */

/**
 * The permissions the logged-in person may give a key (the server's rule, accounts/key-grants.ts): their role's, and
 * `operator` for the owner of an operator account.
 * @param {import('../lib/context.js').Ctx} ctx
 */
function offered(ctx) {
  const grants = ctx.facts.roles.find((r) => r.name === ctx.role)?.grants ?? [];
  return ctx.role === 'owner' && ctx.session?.account.role === 'operator' ? [...grants, 'operator'] : grants;
}

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function keysPage(ctx) {
  const networks = await loadNetworks();
  const list = h('div', { id: 'key-list' });
  const created = h('div', { id: 'created-slot' });
  /** Member ids to names: a key lists who made it (a member's keys are revoked when the member is removed). */
  /** @type {Map<string, string>} */
  let makers = new Map();
  /** @param {ApiKey} k */
  const maker = (k) => (k.createdBy === null ? 'account owner' : makers.get(k.createdBy) ?? 'a removed member');

  /** The keys shown: a page of 100 at a time, the next on asking (an account may have thousands). */
  /** @type {ApiKey[]} */
  let shown = [];
  /** The keys of `keys` the list shows: revoked and expired ones only when asked. @param {any[]} keys */
  const visible = (keys) => (showRevokedBox.checked ? keys : keys.filter((k) => keyStatus(k) === 'active'));
  /** @param {string | null} cursor @returns {HTMLElement | null} */
  const more = (cursor) => (cursor === null ? null : h('button', {
    type: 'button', id: 'more-keys',
    onclick: async () => {
      try {
        const next = /** @type {{ keys: ApiKey[], nextCursor: string | null }} */ (await api('GET', `/keys?limit=100&cursor=${encodeURIComponent(cursor)}`));
        shown = [...shown, ...next.keys];
        list.replaceChildren(keyTable(visible(shown)), more(next.nextCursor) ?? '');
      } catch (err) {
        list.replaceChildren(failed(err, 'Your keys'));
      }
    },
  }, 'Show 100 more keys'));

  const refresh = async () => {
    try {
      const [page, team] = await Promise.all([
        /** @type {Promise<{ keys: ApiKey[], nextCursor: string | null }>} */ (api('GET', '/keys?limit=100')),
        /** @type {Promise<{ members: { id: string, name: string, email: string }[] }>} */ (api('GET', '/account/members')),
      ]);
      makers = new Map(team.members.map((m) => [m.id, `${m.name} (${m.email})`]));
      shown = page.keys;
      const revoked = shown.filter((k) => keyStatus(k) !== 'active').length;
      showRevoked.hidden = revoked === 0;
      showRevokedLabel.textContent = ` Show revoked and expired keys (${revoked})`;
      list.replaceChildren(keyTable(visible(shown)), more(page.nextCursor) ?? '');
    } catch (err) {
      list.replaceChildren(failed(err, 'Your keys'));
    }
  };

  // Revoked keys stay in the store (their usage keeps its name) but leave the list: one tick brings them back.
  const showRevokedBox = h('input', { type: 'checkbox', id: 'show-revoked', onchange: () => void refresh() });
  const showRevokedLabel = h('span', {});
  const listStatus = h('p', { class: 'inline-status', role: 'status', id: 'key-list-status' });
  const showRevoked = h('label', { class: 'check', for: 'show-revoked', hidden: true }, showRevokedBox, showRevokedLabel);

  /** @param {ApiKey[]} keys */
  const keyTable = (keys) => cardTable({
    id: 'keys', caption: 'Your API keys', empty: 'No keys yet: “New key” makes one.', rows: keys, rowAttrs: (k) => ({ 'data-key': k.id }),
    columns: [
      { title: 'Name', class: 'key-name', cell: (k) => h('a', { href: `#/keys/${encodeURIComponent(k.id)}`, 'aria-label': `Key ${k.name}: details and allowlists` }, k.name) },
      { title: 'Type', cell: (k) => k.type },
      { title: 'Permissions', cell: (k) => k.permissions.join(', ') },
      { title: 'Starts with', cell: (k) => h('code', {}, `${k.prefix}…`) },
      { title: 'Made by', class: 'key-maker', cell: (k) => maker(k) },
      { title: 'Allowlists', class: 'key-rules', cell: (k) => rulesSummary(k) },
      { title: 'Last used', cell: (k) => when(k.lastUsedAt) },
      { title: 'Status', cell: (k) => h('span', { class: `status-${keyStatus(k)}` }, keyStatus(k)) },
      { title: 'Actions', cell: (k) => (ctx.can('changeKeys') && keyStatus(k) === 'active' ? revokeButton(k) : '') },
    ],
  });

  /** @param {ApiKey} k */
  const revokeButton = (k) => {
    const b = h('button', {
      type: 'button', class: 'danger', 'data-revoke': k.id, 'aria-label': `Revoke key ${k.name}`,
      onclick: async () => {
        const ok = await confirmDialog({ title: `Revoke “${k.name}”?`, body: 'Requests with this key are refused from the next one, on every instance. This cannot be undone.', confirm: 'Revoke key', tone: 'danger' });
        if (!ok) return;
        b.disabled = true;
        b.setAttribute('aria-busy', 'true');
        try {
          await api('POST', `/keys/${encodeURIComponent(k.id)}/revoke`);
          await refresh();
          listStatus.textContent = `Revoked “${k.name}”.${showRevokedBox.checked ? '' : ' It has left the list; “Show revoked and expired keys” brings it back.'}`;
          focus(list.querySelector(`[data-key="${CSS.escape(k.id)}"] .status-revoked`) ?? listStatus);
        } catch (err) {
          b.disabled = false;
          b.removeAttribute('aria-busy');
          b.after(failed(err, 'Revoking'));
        }
      },
    }, 'Revoke');
    return b;
  };

  /** The new key's URLs, shown once. @param {CreatedKey} key */
  const showCreated = (key) => {
    rememberKey({ value: key.value, name: key.name });
    const usable = networks.filter((n) => key.networkAllowlist.length === 0 || key.networkAllowlist.includes(n.name));
    const heading = h('h2', { id: 'created-heading' }, `Key “${key.name}” is ready`);
    created.replaceChildren(h('section', { class: 'card once', 'aria-labelledby': 'created-heading' }, heading,
      h('p', { class: 'strong' }, 'Copy these URLs now: the key is shown this once and never again (only its first characters are kept in the list).'),
      ...usable.flatMap((n, i) => [
        copyBox({ label: `${endpointLabel(n.url)} URL for ${n.name}`, value: httpUrl(n, key.value), id: i === 0 ? 'new-key-url' : `new-key-url-${n.name}`, what: `${endpointLabel(n.url)} URL for ${n.name}`, copyId: i === 0 ? 'copy-url' : undefined }),
        copyBox({ label: `WebSocket URL for ${n.name}`, value: wsUrl(n, key.value), id: i === 0 ? 'new-key-ws' : `new-key-ws-${n.name}`, what: `WebSocket URL for ${n.name}`, copyId: i === 0 ? 'copy-ws' : undefined }),
      ]),
      copyBox({ label: 'The key alone', value: key.value, id: 'new-key-value', what: 'key value', copyId: 'copy-key' }),
      h('p', {}, h('a', { href: '#/overview' }, 'See snippets for viem and ethers with this key'))));
    focus(/** @type {HTMLElement | null} */ (created.querySelector('input')));
  };

  const form = new Form({
    id: 'new-key-form', title: 'Create a key', submit: 'Create key', submitId: 'create-key', busyLabel: 'Creating…',
    fields: keyFields(ctx.facts, networks, offered(ctx)),
    onSubmit: async (v) => {
      /** @type {Record<string, unknown>} */
      const body = { name: v.name.trim(), type: v.type, ...rulesOf(v) };
      if (v.type === 'Restricted') body.permissions = v.permissions;
      if (v.expiresAt) body.expiresAt = new Date(`${v.expiresAt}T23:59:59Z`).toISOString();
      const key = /** @type {CreatedKey} */ (await api('POST', '/keys', body));
      creating.close();
      showCreated(key);
      await refresh();
    },
  });
  const creating = createPanel({ id: 'new-key', label: 'New key', form, onOpen: () => created.replaceChildren() });

  const byReference = new Form({
    id: 'revoke-by-reference', title: 'Revoke a key by its value or prefix', submit: 'Revoke', submitId: 'revoke-reference', busyLabel: 'Revoking…', tone: 'danger',
    fields: [{
      name: 'key', label: 'Key value or prefix', id: 'revoke-reference-key', required: true, autocomplete: 'off',
      hint: 'The whole key (ngk_…), or the first characters shown in the list (ngk_Ab12…). A prefix that several keys share revokes nothing: they are named.',
      check: (x) => (/^ngk_[0-9A-Za-z]{2,}/.test(String(x).trim()) ? undefined : 'Give a key (ngk_…) or at least ngk_ and two characters of its prefix.'),
    }],
    onSubmit: async (v) => {
      const ok = await confirmDialog({ title: 'Revoke this key?', body: 'Requests with it are refused from the next one, on every instance. A value rotated out only stops early.', confirm: 'Revoke', tone: 'danger' });
      if (!ok) return;
      const done = /** @type {{ outcome: string, key: ApiKey }} */ (await api('POST', '/keys/revoke', { key: String(v.key).trim() }));
      await refresh();
      if (done.outcome === 'overlap_ended') return `The old value of “${done.key.name}” no longer works; the key and its current value still do.`;
      return done.outcome === 'already_revoked' ? `“${done.key.name}” was already revoked.` : `Revoked “${done.key.name}”.`;
    },
  });

  await refresh();
  return {
    title: 'API keys',
    body: h('div', {}, ctx.can('changeKeys') ? creating.el : readOnlyNote(ctx.role), created, h('h2', {}, 'Your keys'), showRevoked, listStatus, list,
      ctx.can('changeKeys') ? h('div', { class: 'card' }, byReference.el) : null),
  };
}
