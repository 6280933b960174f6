// @ts-check
// An invitation link (#/accept?token=…): the page names the account and the role, then the invited person gives a
// name and a password and is logged in as a member of the account, with the role the owner chose.
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
  // What the link is for, before anything is chosen: the account and the role (a bad or used link is said at once).
  /** @type {import('../lib/dom.js').Child} */
  let intro = h('p', {}, 'You were invited to a Nodegate account. Choose your password to join it.');
  if (token) {
    try {
      const inv = /** @type {{ account: string, role: string, email: string }} */ (await api('POST', '/invitations/preview', { token }));
      const can = ctx.facts.roles.find((r) => r.name === inv.role);
      intro = h('p', { id: 'invitation' }, 'You were invited to join ', h('strong', {}, inv.account), ' as ', h('strong', {}, inv.role), ` (${inv.email})`,
        can ? `. A ${inv.role}: ${can.help}` : '', can?.help.endsWith('.') ? ' ' : '. ', 'Choose your name and password to join.');
    } catch (err) {
      intro = h('p', { class: 'form-error', role: 'alert', id: 'invitation' }, err instanceof Error ? err.message : String(err));
    }
  }
  return { title: 'Accept the invitation', body: h('div', { class: 'card narrow' }, intro, form.el) };
}
