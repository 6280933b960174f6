// @ts-check
// Forgot password: the gateway mails a reset link when an account uses the email, and says the same either way
// (whether an email has an account is not revealed). A gateway without mail says that plainly instead.
import { Form } from '../components/form.js';
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';

/** @returns {Promise<import('../lib/context.js').Page>} */
export async function forgotPage() {
  const form = new Form({
    id: 'forgot-form', submit: 'Send me a reset link', submitId: 'send-reset', busyLabel: 'Sending…', keepValues: true,
    fields: [{ name: 'email', label: 'Email', type: 'email', id: 'forgot-email', required: true, autocomplete: 'username' }],
    onSubmit: async (v) => {
      const r = /** @type {{ message?: string, mail?: boolean }} */ (await api('POST', '/password-reset', { email: v.email.trim() }));
      // A gateway without mail says so: no one waits for a link that cannot come.
      if (r?.mail === false) throw new Error(r.message ?? 'Mail is not configured on this gateway: ask the operator for a reset link.');
      return `${r?.message ?? 'If an account uses this email, a reset link is on its way'}. The link works once, for a limited time. No mail? Ask the operator of this gateway for a reset link.`;
    },
  });
  return { title: 'Reset your password', body: h('div', { class: 'card narrow' }, form.el, h('p', {}, h('a', { href: '#/login' }, 'Back to log in'))) };
}
