// @ts-check
// Sign up (when the operator opened it: accounts.openSignup): a new account on the sign-up plan, logged in at once.
import { Form } from '../components/form.js';
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function signupPage(ctx) {
  const form = new Form({
    id: 'signup-form', submit: 'Create account', submitId: 'signup', busyLabel: 'Creating your account…',
    fields: [
      { name: 'name', label: 'Your name or your team’s', id: 'signup-name', required: true, autocomplete: 'organization' },
      { name: 'email', label: 'Email', type: 'email', id: 'signup-email', required: true, autocomplete: 'username' },
      { name: 'password', label: 'Password', type: 'password', id: 'signup-password', required: true, autocomplete: 'new-password', hint: 'At least 12 characters.' },
    ],
    onSubmit: async (v) => {
      ctx.signedIn(await api('POST', '/signup', v));
    },
  });
  return { title: 'Sign up', body: h('div', { class: 'card narrow' }, form.el, h('p', {}, 'Already have an account? ', h('a', { href: '#/login' }, 'Log in'))) };
}
