// @ts-check
// Settings: change the password (every other session of the login ends).
import { Form } from '../components/form.js';
import { api, setCsrf } from '../lib/api.js';
import { h } from '../lib/dom.js';

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function settingsPage(ctx) {
  const who = ctx.session?.member ?? ctx.session?.account;
  const form = new Form({
    id: 'password-form', title: 'Change your password', submit: 'Change password', submitId: 'change-password', busyLabel: 'Changing…',
    fields: [
      { name: 'currentPassword', label: 'Current password', type: 'password', id: 'current-password', required: true, autocomplete: 'current-password' },
      { name: 'newPassword', label: 'New password', type: 'password', id: 'new-password', required: true, autocomplete: 'new-password', hint: 'At least 12 characters.', check: (v) => (v.length > 0 && v.length < 12 ? 'Use at least 12 characters.' : undefined) },
    ],
    onSubmit: async (v) => {
      const r = /** @type {{ csrfToken: string }} */ (await api('POST', '/session/password', v));
      setCsrf(r.csrfToken);
      return 'Password changed. Your other sessions have ended; this one goes on.';
    },
  });
  return {
    title: 'Settings',
    body: h('div', {}, h('p', {}, `Logged in as ${who?.email ?? ''} (${ctx.role}).`), h('section', { class: 'card narrow-left' }, form.el)),
  };
}
