// @ts-check
// An invitation link (#/accept?token=…): the invited person gives a name and a password and is logged in as a
// member of the account, with the role the owner chose.
import { Form } from '../components/form.js';
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function acceptPage(ctx) {
  const token = ctx.query.get('token') ?? '';
  const form = new Form({
    id: 'accept-form', submit: 'Join the account', submitId: 'accept', busyLabel: 'Joining…',
    fields: [
      { name: 'name', label: 'Your name', id: 'accept-name', required: true, autocomplete: 'name' },
      { name: 'password', label: 'Choose a password', type: 'password', id: 'accept-password', required: true, autocomplete: 'new-password', hint: 'At least 12 characters.' },
      { name: 'token', label: 'Invitation code', id: 'accept-token', value: token, required: true, shown: () => !token, hint: 'From the invitation link.' },
    ],
    onSubmit: async (v) => {
      ctx.signedIn(await api('POST', '/invitations/accept', { token: v.token, name: v.name, password: v.password }));
    },
  });
  return { title: 'Accept the invitation', body: h('div', { class: 'card narrow' }, h('p', {}, 'You were invited to a Nodegate account. Choose your password to join it.'), form.el) };
}
