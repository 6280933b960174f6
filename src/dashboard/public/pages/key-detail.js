// @ts-check
// One key: what its type means (Dedicated included), its permissions, when it was last used (successful calls
// only), and its allowlists in an editor with Cancel and a "Saved" confirmation, problems next to the field.
import { confirmDialog } from '../components/confirm.js';
import { Form } from '../components/form.js';
import { failed, readOnlyNote } from '../components/notice.js';
import { api } from '../lib/api.js';
import { focus, h, when } from '../lib/dom.js';
import { loadNetworks } from '../lib/endpoints.js';
import { capital } from '../lib/facts.js';
import { keyStatus } from '../lib/key-status.js';
import { allowlistFields } from './key-fields.js';

/** @typedef {import('../lib/types.js').ApiKey} ApiKey */

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function keyDetailPage(ctx) {
  const [networks, first] = await Promise.all([loadNetworks(), /** @type {Promise<ApiKey>} */ (api('GET', `/keys/${encodeURIComponent(ctx.params.id)}`))]);
  let key = first;
  const facts = h('dl', { class: 'facts', id: 'key-facts' });
  const drawFacts = () => {
    const type = ctx.facts.keyTypes.find((t) => t.name === key.type);
    /** @type {Array<[string, import('../lib/dom.js').Child]>} */
    const rows = [
      ['Type', h('span', {}, h('strong', {}, key.type), ' — ', type?.help ?? '')],
      ['Permissions', h('ul', {}, ...key.permissions.map((p) => h('li', {}, h('code', {}, p), ': ', ctx.facts.permissions.find((x) => x.name === p)?.help ?? '')))],
      ['Starts with', h('code', {}, `${key.prefix}…`)],
      ['Status', h('span', { class: `status-${keyStatus(key)}`, id: 'key-status' }, keyStatus(key))],
      ['Created', when(key.createdAt)],
      ['Last used', h('span', {}, when(key.lastUsedAt), h('span', { class: 'muted' }, ' (last successful call)'))],
      ['Expires', key.expiresAt ? when(key.expiresAt) : 'never'],
    ];
    facts.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  };
  drawFacts();

  const editable = ctx.can('changeKeys') && keyStatus(key) === 'active';
  const editor = new Form({
    id: 'allowlists', title: 'Allowlists', submit: 'Save allowlists', submitId: 'save-allowlists', busyLabel: 'Saving…', keepValues: true,
    fields: allowlistFields(networks, key, 'edit'),
    cancel: () => {
      // Back to what is saved: the fields take the key's values again.
      for (const f of editor.fields.values()) {
        const saved = /** @type {string[]} */ (key[/** @type {keyof ApiKey} */ (f.spec.name)]);
        if (f.boxes.length) for (const b of f.boxes) b.checked = saved.includes(b.value);
        else f.input.value = saved.join('\n');
      }
      editor.clearErrors();
      editor.status.textContent = 'Changes discarded.';
    },
    onSubmit: async (v) => {
      key = await api('PATCH', `/keys/${encodeURIComponent(key.id)}`, { ipAllowlist: v.ipAllowlist, originAllowlist: v.originAllowlist, networkAllowlist: v.networkAllowlist, methodAllowlist: v.methodAllowlist });
      drawFacts();
      return 'Saved. The key’s next request is checked against these lists.';
    },
  });

  const revoke = h('button', {
    type: 'button', class: 'danger', id: 'revoke-key',
    onclick: async () => {
      if (!(await confirmDialog({ title: `Revoke “${key.name}”?`, body: 'Requests with this key are refused from the next one. This cannot be undone.', confirm: 'Revoke key', tone: 'danger' }))) return;
      revoke.disabled = true;
      try {
        key = await api('POST', `/keys/${encodeURIComponent(key.id)}/revoke`);
        drawFacts();
        editor.el.hidden = true;
        revoke.hidden = true;
        focus(document.getElementById('key-status'));
      } catch (err) {
        revoke.disabled = false;
        revoke.after(failed(err, 'Revoking'));
      }
    },
  }, 'Revoke this key');

  const readOnly = h('div', {}, ...['ipAllowlist', 'originAllowlist', 'networkAllowlist', 'methodAllowlist'].map((f) => {
    const list = /** @type {string[]} */ (key[/** @type {keyof ApiKey} */ (f)]);
    return h('p', {}, h('strong', {}, capital(f.replace('Allowlist', ' allowlist'))), ': ', list.length ? list.join(', ') : 'any');
  }));
  return {
    title: `Key “${key.name}”`,
    body: h('div', {}, h('p', {}, h('a', { href: '#/keys' }, '← All keys')), h('section', { class: 'card' }, facts),
      h('section', { class: 'card' }, editable ? editor.el : h('div', {}, h('h2', {}, 'Allowlists'), readOnly, ctx.can('changeKeys') ? null : readOnlyNote(ctx.role))),
      editable ? h('p', {}, revoke) : null),
  };
}
