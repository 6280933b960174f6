// @ts-check
// A reset link (#/reset?token=…): a new password; the gateway logs the user in and ends their other sessions.
import { Form } from '../components/form.js';
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function resetPage(ctx) {
  const token = ctx.query.get('token') ?? '';
  const form = new Form({
    id: 'reset-form', submit: 'Set the new password', submitId: 'set-password', busyLabel: 'Saving…',
    fields: [
      { name: 'password', label: 'New password', type: 'password', id: 'reset-password', required: true, autocomplete: 'new-password', hint: 'At least 12 characters.' },
      { name: 'token', label: 'Reset code', type: 'text', id: 'reset-token', value: token, required: true, shown: () => !token, hint: 'From the link you received.' },
    ],
    onSubmit: async (v) => {
      const r = await api('POST', '/password-reset/complete', { token: v.token, password: v.password });
      ctx.signedIn(/** @type {any} */ (r));
    },
  });
  return { title: 'Choose a new password', body: h('div', { class: 'card narrow' }, form.el, h('p', {}, 'Link expired? ', h('a', { href: '#/forgot' }, 'Ask for a new one'), '.')) };
}
