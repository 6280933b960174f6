// @ts-check
// One webhook: its settings, a test event, the secret's rotation (shown once), and its deliveries: each event's
// payload, the target's answer (status, time, error, the first bytes of the body), the next retry, and Redeliver.
import { actionButton } from '../components/action-button.js';
import { confirmDialog } from '../components/confirm.js';
import { copyBox } from '../components/copy.js';
import { failed, readOnlyNote } from '../components/notice.js';
import { api } from '../lib/api.js';
import { focus, h, when } from '../lib/dom.js';
import { rotateSecret, sendTest } from '../lib/webhook-actions.js';

/** @typedef {import('../lib/types.js').Webhook} Webhook */
/** @typedef {import('../lib/types.js').Delivery} Delivery */

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function webhookDetailPage(ctx) {
  const id = ctx.params.id;
  const path = `/webhooks/${encodeURIComponent(id)}`;
  const w = /** @type {Webhook} */ (await api('GET', path));
  const deliveries = h('div', { id: 'deliveries' });
  const secretSlot = h('div');

  /** @param {Delivery} d */
  const card = (d) => {
    const eventId = d.eventId ?? d.id ?? '';
    const delivered = d.deliveredAt ?? (d.status === 'delivered' ? 'yes' : null);
    const last = d.lastAttempt ?? (d.lastStatus !== undefined || d.lastError ? { at: '', status: d.lastStatus ?? null, durationMs: null, error: d.lastError ?? null, responseBody: null } : null);
    return h('article', { class: 'card delivery', 'data-event': eventId },
      h('h3', {}, h('code', {}, d.type), ' ', h('span', { class: delivered ? 'ok' : 'muted' }, delivered ? 'delivered' : 'pending')),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Event'), h('dd', {}, h('code', { class: 'wrap' }, eventId)),
        h('dt', {}, 'Created'), h('dd', {}, when(d.createdAt)),
        h('dt', {}, 'Attempts'), h('dd', {}, String(d.attempts)),
        h('dt', {}, 'Delivered'), h('dd', {}, d.deliveredAt ? when(d.deliveredAt) : delivered ? 'yes' : 'not yet'),
        delivered ? null : h('dt', {}, 'Next retry'), delivered ? null : h('dd', {}, when(d.nextAttemptAt)),
        h('dt', {}, 'Last answer'), h('dd', {}, last ? `${last.status ?? 'no answer'}${last.durationMs != null ? ` in ${last.durationMs} ms` : ''}${last.error ? ` — ${last.error}` : ''}` : '—')),
      d.payload !== undefined ? h('details', {}, h('summary', {}, 'Payload'), h('pre', { tabindex: 0 }, h('code', {}, JSON.stringify(d.payload, null, 2)))) : null,
      last?.responseBody ? h('details', {}, h('summary', {}, 'Response body (first 2 KB)'), h('pre', { tabindex: 0 }, h('code', {}, last.responseBody))) : null,
      ctx.can('changeWebhooks') ? actionButton('Redeliver', { 'aria-label': `Redeliver event ${eventId}` }, async () => {
        await api('POST', `${path}/deliveries/${encodeURIComponent(eventId)}/redeliver`);
        setTimeout(() => void load(), 1000);
        return 'A new copy is queued.';
      }) : null);
  };

  const load = async () => {
    try {
      const r = /** @type {{ deliveries: Delivery[] }} */ (await api('GET', `${path}/deliveries?limit=50`));
      deliveries.replaceChildren(...(r.deliveries.length ? r.deliveries.map(card) : [h('p', { class: 'muted' }, 'No events yet.')]));
    } catch (err) {
      deliveries.replaceChildren(failed(err, 'Deliveries'));
    }
  };

  const rotate = actionButton('Rotate secret', { id: 'rotate-secret' }, async () => {
    if (!(await confirmDialog({ title: 'Rotate the signing secret?', body: 'A new secret signs every event from now on; the old one stops signing at once. Update your receiver with the new one.', confirm: 'Rotate secret', tone: 'danger' }))) return '';
    const secret = await rotateSecret(id);
    secretSlot.replaceChildren(h('section', { class: 'card once' }, h('p', {}, 'The new signing secret, shown this once:'), copyBox({ label: 'New signing secret', value: secret, id: 'rotated-secret', what: 'new signing secret' })));
    focus(/** @type {HTMLElement} */ (secretSlot.querySelector('input')));
    return 'Rotated.';
  });

  await load();
  return {
    title: `Webhook ${w.kind}`,
    body: h('div', {}, h('p', {}, h('a', { href: '#/webhooks' }, '← All webhooks')),
      h('section', { class: 'card' }, h('dl', { class: 'facts' },
        h('dt', {}, 'Kind'), h('dd', {}, w.kind, ' — ', ctx.facts.webhookKinds.find((k) => k.name === w.kind)?.help ?? ''),
        h('dt', {}, 'Network'), h('dd', {}, w.network || '—'),
        h('dt', {}, 'Target'), h('dd', {}, h('code', { class: 'wrap' }, w.url)),
        h('dt', {}, 'Options'), h('dd', { id: 'webhook-options' }, optionsList(w, ctx.facts)),
        h('dt', {}, 'Status'), h('dd', {}, w.status, w.disabledReason ? ` (${w.disabledReason})` : '')),
      ctx.can('changeWebhooks') ? h('div', { class: 'actions' }, actionButton('Send test', { id: 'send-test' }, async () => { const said = await sendTest(id); setTimeout(() => void load(), 1000); return said; }), rotate) : readOnlyNote(ctx.role)),
      secretSlot,
      h('h2', {}, 'Deliveries ', h('button', { type: 'button', class: 'secondary', id: 'reload-deliveries', onclick: () => void load() }, 'Reload')),
      deliveries),
  };
}

/**
 * A webhook's options as its kind's labels and values ("Contract addresses: 0x…, 0x…"), not as JSON.
 * @param {import('../lib/types.js').Webhook} w @param {import('../lib/types.js').Facts} facts
 */
function optionsList(w, facts) {
  const entries = Object.entries(/** @type {Record<string, unknown>} */ (w.options ?? {}));
  if (!entries.length) return 'none';
  const kind = facts.webhookKinds.find((k) => k.name === w.kind);
  return h('ul', {}, ...entries.map(([name, value]) => h('li', {}, `${kind?.options.find((o) => o.name === name)?.label ?? name}: `,
    h('code', { class: 'wrap' }, Array.isArray(value) ? value.join(', ') : String(value)))));
}
