// @ts-check
// One key: what its type means (Dedicated included), its permissions, when it was last used (successful calls
// only), its numbers (the last 24 hours and this month, per network), and its allowlists in an editor with Cancel and a "Saved" confirmation, problems next to the field.
import { confirmDialog } from '../components/confirm.js';
import { Form } from '../components/form.js';
import { failed, readOnlyNote } from '../components/notice.js';
import { api } from '../lib/api.js';
import { focus, h, when } from '../lib/dom.js';
import { loadNetworks } from '../lib/endpoints.js';
import { capital } from '../lib/facts.js';
import { keyStatus } from '../lib/key-status.js';
import { copyBox } from '../components/copy.js';
import { periods } from '../components/usage-summary.js';
import { allowlistFields, RULE_FIELDS, rulesOf } from './key-fields.js';

/** @typedef {import('../lib/types.js').ApiKey} ApiKey */

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function keyDetailPage(ctx) {
  const [networks, first] = await Promise.all([loadNetworks(), /** @type {Promise<ApiKey>} */ (api('GET', `/keys/${encodeURIComponent(ctx.params.id)}`))]);
  let key = first;
  const usage = await periods({ keyId: key.id, id: 'key-usage' }).then((p) => p.el, (err) => failed(err, 'The numbers of this key'));
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
      ['JWT', key.jwtKeys.length ? `required, signed by ${key.jwtKeys.map((j) => `${j.id} (${j.alg})`).join(', ')}` : 'not required'],
      ...(key.previousUntil ? [/** @type {[string, import('../lib/dom.js').Child]} */ (['Previous value', h('span', {}, h('code', {}, `${key.previousPrefix}…`), ' works until ', when(key.previousUntil))])] : []),
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
        const saved = /** @type {string[] | number | null} */ (key[/** @type {keyof ApiKey} */ (f.spec.name)]);
        if (!Array.isArray(saved)) f.input.value = saved === null ? '' : String(saved);
        else if (f.boxes.length) for (const b of f.boxes) b.checked = saved.includes(b.value);
        else f.input.value = saved.join('\n');
      }
      editor.clearErrors();
      editor.status.textContent = 'Changes discarded.';
    },
    onSubmit: async (v) => {
      key = await api('PATCH', `/keys/${encodeURIComponent(key.id)}`, rulesOf(v));
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
        rotation.el.hidden = true;
        revoke.hidden = true;
        focus(document.getElementById('key-status'));
      } catch (err) {
        revoke.disabled = false;
        revoke.after(failed(err, 'Revoking'));
      }
    },
  }, 'Revoke this key');

  // A new value, shown once; the old one works for the overlap chosen.
  const rotated = h('div', { id: 'rotated-slot' });
  const rotation = new Form({
    id: 'rotate', title: 'Rotate the key', submit: 'Rotate', submitId: 'rotate-key', busyLabel: 'Rotating…',
    fields: [{
      name: 'overlapSeconds', label: 'The old value keeps working for', type: 'select', id: 'rotate-overlap', value: '60',
      options: [{ value: '0', label: 'no time: it stops now' }, { value: '60', label: '1 minute' }, { value: '3600', label: '1 hour' }, { value: '86400', label: '1 day (the most)' }],
      hint: 'Time to deploy the new value everywhere; then only the new value works.',
    }],
    onSubmit: async (v) => {
      const done = /** @type {ApiKey & { value: string }} */ (await api('POST', `/keys/${encodeURIComponent(key.id)}/rotate`, { overlapSeconds: Number(v.overlapSeconds) }));
      const { value, ...rest } = done;
      key = rest;
      drawFacts();
      rotated.replaceChildren(h('p', { class: 'strong' }, 'Copy the new value now: it is shown this once.'), copyBox({ label: 'The new key value', value, id: 'rotated-value', what: 'new key value', copyId: 'copy-rotated' }));
      focus(/** @type {HTMLElement | null} */ (rotated.querySelector('input')));
      return key.previousUntil ? 'Rotated. The old value works until the time shown above.' : 'Rotated. The old value no longer works.';
    },
  });

  const readOnly = h('div', {}, ...RULE_FIELDS.map((f) => {
    const list = /** @type {string[]} */ (key[/** @type {keyof ApiKey} */ (f)]);
    return h('p', {}, h('strong', {}, capital(f.replace('Allowlist', ' allowlist').replace('Denylist', ' denylist').replace('jwtAudiences', 'JWT audiences'))), ': ', list.length ? list.join(', ') : f === 'methodDenylist' ? 'none' : 'any');
  }), h('p', {}, h('strong', {}, 'eth_getLogs range'), ': ', key.logsMaxBlockRange ? `${key.logsMaxBlockRange} blocks` : "the network's"));
  return {
    title: `Key “${key.name}”`,
    body: h('div', {}, h('p', {}, h('a', { href: '#/keys' }, '← All keys')), h('section', { class: 'card' }, facts), usage,
      h('section', { class: 'card' }, editable ? editor.el : h('div', {}, h('h2', {}, 'Allowlists'), readOnly, ctx.can('changeKeys') ? null : readOnlyNote(ctx.role))),
      editable ? h('section', { class: 'card' }, rotation.el, rotated) : null,
      editable ? h('p', {}, revoke) : null),
  };
}
