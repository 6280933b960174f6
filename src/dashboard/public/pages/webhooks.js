// @ts-check
// Webhooks: the list first, with a test event (its feedback beside the button), pause or resume, delete (a refusal
// said beside it), and a link to its deliveries; "New webhook" opens the form (every kind, each kind's options
// checked; the signing secret shown once, focused; the form emptied and closed).
import { actionButton } from '../components/action-button.js';
import { confirmDialog } from '../components/confirm.js';
import { copyBox } from '../components/copy.js';
import { createPanel } from '../components/create-panel.js';
import { Form } from '../components/form.js';
import { failed, readOnlyNote } from '../components/notice.js';
import { cardTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { focus, h } from '../lib/dom.js';
import { loadNetworks } from '../lib/endpoints.js';
import { sendTest } from '../lib/webhook-actions.js';
import { webhookBody, webhookFields } from './webhook-fields.js';

/** @typedef {import('../lib/types.js').Webhook} Webhook */

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function webhooksPage(ctx) {
  const networks = await loadNetworks();
  const list = h('div', { id: 'webhook-list' });
  const created = h('div');

  const refresh = async () => {
    try {
      const { webhooks } = /** @type {{ webhooks: Webhook[] }} */ (await api('GET', '/webhooks'));
      list.replaceChildren(table(webhooks));
    } catch (err) {
      list.replaceChildren(failed(err, 'Your webhooks'));
    }
  };

  /** @param {Webhook[]} hooks */
  const table = (hooks) => cardTable({
    id: 'webhooks', caption: 'Your webhooks', empty: 'No webhooks yet.', rows: hooks, rowAttrs: (w) => ({ 'data-webhook': w.id }),
    columns: [
      { title: 'Kind', cell: (w) => h('a', { href: `#/webhooks/${encodeURIComponent(w.id)}`, 'aria-label': `${w.kind} webhook to ${w.url}: details and deliveries` }, w.kind) },
      { title: 'Network', cell: (w) => w.network || '—' },
      { title: 'Target', cell: (w) => h('code', { class: 'wrap' }, w.url) },
      { title: 'Status', cell: (w) => h('span', { class: w.status === 'active' ? 'ok' : 'bad' }, w.status, w.disabledReason ? ` (${w.disabledReason})` : '') },
      {
        title: 'Actions',
        cell: (w) => (ctx.can('changeWebhooks') ? [
          actionButton('Send test', { 'data-test': w.id, 'aria-label': `Send test to ${w.url}` }, () => sendTest(w.id)),
          actionButton(w.status === 'active' ? 'Pause' : 'Resume', { 'aria-label': `${w.status === 'active' ? 'Pause' : 'Resume'} the webhook to ${w.url}` }, async () => {
            await api('POST', `/webhooks/${encodeURIComponent(w.id)}/${w.status === 'active' ? 'pause' : 'resume'}`);
            await refresh();
          }),
          deleteButton(w),
        ] : h('a', { href: `#/webhooks/${encodeURIComponent(w.id)}` }, 'Deliveries')),
      },
    ],
  });

  /** @param {Webhook} w */
  const deleteButton = (w) => {
    const say = h('span', { class: 'inline-status bad', role: 'alert' });
    const b = h('button', {
      type: 'button', class: 'danger', 'aria-label': `Delete the webhook to ${w.url}`,
      onclick: async () => {
        say.textContent = '';
        if (!(await confirmDialog({ title: 'Delete this webhook?', body: `Events to ${w.url} that were not delivered yet are dropped. This cannot be undone.`, confirm: 'Delete webhook', tone: 'danger' }))) return;
        try {
          await api('DELETE', `/webhooks/${encodeURIComponent(w.id)}`);
          await refresh();
        } catch (err) {
          say.textContent = `Not deleted: ${err instanceof Error ? err.message : String(err)}`;
        }
      },
    }, 'Delete');
    return h('span', { class: 'action' }, b, say);
  };

  const form = new Form({
    id: 'new-webhook-form', title: 'Create a webhook', submit: 'Create webhook', submitId: 'create-webhook', busyLabel: 'Creating…',
    fields: webhookFields(ctx.facts, networks),
    onSubmit: async (v) => {
      const w = /** @type {Webhook & { secret: string }} */ (await api('POST', '/webhooks', webhookBody(v, ctx.facts)));
      creating.close();
      created.replaceChildren(h('section', { class: 'card once', 'aria-labelledby': 'hook-created' },
        h('h2', { id: 'hook-created' }, 'Webhook created'),
        h('p', {}, 'Its signing secret is shown this once: keep it to check the signatures of the events.'),
        copyBox({ label: 'Signing secret', value: w.secret, id: 'webhook-secret', what: 'signing secret' }),
        h('p', {}, h('a', { href: `#/webhooks/${encodeURIComponent(w.id)}` }, 'Open the webhook and its deliveries'))));
      focus(/** @type {HTMLElement} */ (created.querySelector('input')));
      await refresh();
    },
  });

  const creating = createPanel({ id: 'new-webhook', label: 'New webhook', form, onOpen: () => created.replaceChildren() });

  await refresh();
  return { title: 'Webhooks', body: h('div', {}, ctx.can('changeWebhooks') ? creating.el : readOnlyNote(ctx.role), created, h('h2', {}, 'Your webhooks'), list) };
}
