// @ts-check
// Log in: email and password (the focus starts on the email), links to "forgot password" and, when the operator
// opened sign-up, to sign up. A suspended account is told so after the right password (the server's 403).
import { Form } from '../components/form.js';
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';

/** @type {Record<string, string>} */
const MESSAGES = { ended: 'Your session has ended; log in again.', out: 'You are logged out.' };

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function loginPage(ctx) {
  const signup = h('p', { hidden: true }, 'No account yet? ', h('a', { href: '#/signup', id: 'signup-link' }, 'Sign up'));
  // Asked in the background: the form is usable at once; a gateway without open sign-up (or without the route) shows no link.
  api('GET', '/signup').then((r) => { signup.hidden = !(/** @type {{ open?: boolean }} */ (r)?.open); }).catch(() => {});
  // Only the page's own messages: text from the address would let a link put any words on the login page.
  const message = MESSAGES[ctx.query.get('m') ?? ''];
  const form = new Form({
    id: 'login-form', submit: 'Log in', submitId: 'login', busyLabel: 'Logging in…',
    fields: [
      { name: 'email', label: 'Email', type: 'email', id: 'email', required: true, autocomplete: 'username' },
      { name: 'password', label: 'Password', type: 'password', id: 'password', required: true, autocomplete: 'current-password' },
    ],
    onSubmit: async (v) => {
      ctx.signedIn(await api('POST', '/session', { email: v.email.trim(), password: v.password }));
    },
  });
  return {
    title: 'Log in',
    focus: form.field('email').input,
    body: h('div', { class: 'card narrow' }, message ? h('p', { class: 'notice', role: 'status' }, message) : null, form.el,
      h('p', {}, h('a', { href: '#/forgot', id: 'forgot-link' }, 'Forgot your password?')), signup),
  };
}
