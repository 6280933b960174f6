// @ts-check
// Operator: accounts. The list first; "New account" opens the form (its plan preselected: the one an account made
// without a choice gets). Per account change the plan (after a confirmation: it changes what the customer may use),
// suspend or reactivate (not the operator's own: the server refuses it), see its usage, and in its panel set a
// password, issue a reset link or invite a member. A refusal is said beside the control that was used.
import { confirmDialog } from '../components/confirm.js';
import { copyBox } from '../components/copy.js';
import { createPanel } from '../components/create-panel.js';
import { Form } from '../components/form.js';
import { failed } from '../components/notice.js';
import { cardTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { focus, h, when } from '../lib/dom.js';

/** @typedef {import('../lib/types.js').Account} Account */
/** @typedef {import('../lib/types.js').Plan} Plan */

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function operatorAccountsPage(ctx) {
  const { plans, defaultPlan } = /** @type {{ plans: Plan[], defaultPlan?: string }} */ (await api('GET', '/operator/plans'));
  const me = ctx.session?.account.id;
  const planLabel = (/** @type {string} */ id) => { const p = plans.find((x) => x.id === id); return p ? `${p.name} (${p.id})` : id; };
  const list = h('div', { id: 'account-list' });
  const panel = h('div', { id: 'account-panel' });

  const refresh = async () => {
    try {
      const { accounts } = /** @type {{ accounts: Account[] }} */ (await api('GET', '/operator/accounts'));
      list.replaceChildren(table(accounts));
    } catch (err) {
      list.replaceChildren(failed(err, 'Accounts'));
    }
  };

  /** @param {Account} a */
  const planSelect = (a) => {
    const select = h('select', { 'data-plan-of': a.email, 'aria-label': `Plan of ${a.email}` }, ...plans.map((p) => h('option', { value: p.id, selected: p.id === a.planId }, planLabel(p.id))));
    const say = h('span', { class: 'inline-status', role: 'status' });
    select.addEventListener('change', async () => {
      const to = select.value;
      const ok = await confirmDialog({ title: `Move ${a.email} to ${planLabel(to)}?`, body: `From the next request, ${a.email} has the limits of ${planLabel(to)} instead of ${planLabel(a.planId)}.`, confirm: 'Change plan' });
      if (!ok) { select.value = a.planId; return; }
      select.disabled = true;
      select.setAttribute('aria-busy', 'true');
      try {
        a.planId = /** @type {Account} */ (await api('PATCH', `/operator/accounts/${encodeURIComponent(a.id)}`, { planId: to })).planId;
        say.textContent = 'Plan changed.';
      } catch (err) {
        select.value = a.planId;
        say.textContent = err instanceof Error ? err.message : String(err);
      } finally {
        select.disabled = false;
        select.removeAttribute('aria-busy');
      }
    });
    return [select, say];
  };

  /** @param {Account} a */
  const statusButton = (a) => {
    // The operator's own account cannot be suspended (the server answers 409): no button offers it.
    if (a.id === me) return h('span', { class: 'muted' }, 'your account');
    const suspended = a.status === 'suspended';
    const say = h('span', { class: 'inline-status bad', role: 'alert', 'data-status-error-of': a.email });
    const b = h('button', {
      type: 'button', class: suspended ? 'secondary' : 'danger', 'data-status-of': a.email, 'aria-label': `${suspended ? 'Reactivate' : 'Suspend'} ${a.email}`,
      onclick: async () => {
        say.textContent = '';
        if (!suspended && !(await confirmDialog({ title: `Suspend ${a.email}?`, body: 'Its keys and logins are refused from the next request, until it is reactivated.', confirm: 'Suspend', tone: 'danger' }))) return;
        b.disabled = true;
        try {
          await api('POST', `/operator/accounts/${encodeURIComponent(a.id)}/${suspended ? 'reactivate' : 'suspend'}`);
          await refresh();
        } catch (err) {
          b.disabled = false;
          say.textContent = `Not ${suspended ? 'reactivated' : 'suspended'}: ${err instanceof Error ? err.message : String(err)}`;
        }
      },
    }, suspended ? 'Reactivate' : 'Suspend');
    return h('span', { class: 'action' }, b, say);
  };

  /** @param {Account[]} accounts */
  const table = (accounts) => cardTable({
    id: 'accounts', caption: 'Accounts', empty: 'No accounts.', rows: accounts, rowAttrs: (a) => ({ 'data-account': a.email }),
    columns: [
      { title: 'Name', cell: (a) => a.name }, { title: 'Email', cell: (a) => a.email }, { title: 'Role', cell: (a) => a.role },
      { title: 'Status', cell: (a) => h('span', { class: a.status === 'active' ? 'ok' : 'bad' }, a.status) },
      { title: 'Plan', cell: planSelect }, { title: 'Created', cell: (a) => when(a.createdAt) },
      { title: 'Usage', cell: (a) => h('a', { href: `#/operator/usage?accountId=${encodeURIComponent(a.id)}`, 'aria-label': `Usage of ${a.email}` }, 'Usage') },
      { title: 'Actions', cell: (a) => [statusButton(a), h('button', { type: 'button', class: 'secondary', 'data-manage': a.email, 'aria-label': `Login and invitations of ${a.email}`, onclick: () => manage(a) }, 'Login and invitations')] },
    ],
  });

  /** One account's login tools, in one panel (opening another replaces it: never two editors). @param {Account} a */
  const manage = (a) => {
    const result = h('div');
    /** @param {string} label @param {string} url @param {string} id */
    const showLink = (label, url, id) => { result.replaceChildren(h('div', { class: 'once card' }, copyBox({ label, value: url, id, what: label }))); focus(/** @type {HTMLElement} */ (result.querySelector('input'))); };
    const setPassword = new Form({
      id: 'set-password-form', title: 'Set the password', submit: 'Set password', submitId: 'set-password',
      fields: [{ name: 'password', label: `New password for ${a.email}`, type: 'password', id: 'op-password', required: true, autocomplete: 'new-password', hint: 'At least 12 characters. Their sessions end.' }],
      onSubmit: async (v) => { await api('PATCH', `/operator/accounts/${encodeURIComponent(a.id)}`, { password: v.password }); return 'Password set; their other sessions have ended.'; },
    });
    const resetLink = new Form({
      id: 'reset-link-form', title: 'Reset link', submit: 'Issue a reset link', submitId: 'reset-link', fields: [],
      onSubmit: async () => {
        const r = /** @type {{ url: string, expiresAt: string }} */ (await api('POST', `/operator/accounts/${encodeURIComponent(a.id)}/reset-link`));
        showLink(`Reset link for ${a.email} (until ${when(r.expiresAt)})`, r.url, 'reset-url');
      },
    });
    const invite = new Form({
      id: 'op-invite-form', title: 'Invite a member', submit: 'Create invitation', submitId: 'op-invite',
      fields: [
        { name: 'email', label: 'Email', type: 'email', id: 'op-invite-email', required: true },
        { name: 'role', label: 'Role', type: 'select', id: 'op-invite-role', value: 'developer', options: ctx.facts.roles.map((r) => ({ value: r.name, label: r.name })) },
      ],
      onSubmit: async (v) => {
        const r = /** @type {{ url: string, emailed: boolean }} */ (await api('POST', `/operator/accounts/${encodeURIComponent(a.id)}/invitations`, v));
        showLink(`Invitation link for ${v.email}${r.emailed ? ' (also mailed)' : ''}`, r.url, 'op-invite-url');
      },
    });
    const heading = h('h2', { id: 'panel-heading' }, `${a.name} (${a.email})`);
    panel.replaceChildren(h('section', { class: 'card', 'aria-labelledby': 'panel-heading' }, heading,
      h('div', { class: 'columns' }, setPassword.el, resetLink.el, invite.el), result,
      h('button', { type: 'button', class: 'secondary', onclick: () => panel.replaceChildren() }, 'Close')));
    focus(heading);
  };

  const form = new Form({
    id: 'new-account-form', title: 'Create an account', submit: 'Create account', submitId: 'create-account', busyLabel: 'Creating…',
    fields: [
      { name: 'name', label: 'Name', id: 'account-name', required: true, attrs: { maxlength: 200 } },
      { name: 'email', label: 'Email', type: 'email', id: 'account-email', required: true },
      { name: 'password', label: 'Password (optional)', type: 'password', id: 'account-password', autocomplete: 'new-password', hint: 'At least 12 characters. Without one, issue a reset link or an invitation instead.' },
      {
        name: 'planId', label: 'Plan', type: 'select', id: 'account-plan', value: defaultPlan ?? '', options: plans.map((p) => ({ value: p.id, label: `${planLabel(p.id)}${p.id === defaultPlan ? ' — the default' : ''}` })),
        hint: defaultPlan ? `Accounts made without a choice (sign-up, the CLI) get ${planLabel(defaultPlan)}.` : undefined,
      },
    ],
    onSubmit: async (v) => {
      await api('POST', '/operator/accounts', { name: v.name.trim(), email: v.email.trim(), planId: v.planId, ...(v.password ? { password: v.password } : {}) });
      creating.close();
      await refresh();
      listStatus.textContent = `Account ${v.email.trim()} created.`;
      focus(/** @type {HTMLElement | null} */ (list.querySelector(`[data-account="${CSS.escape(v.email.trim())}"] td`)));
    },
  });
  const creating = createPanel({ id: 'new-account', label: 'New account', form });
  const listStatus = h('p', { class: 'inline-status', role: 'status', id: 'account-list-status' });

  await refresh();
  return { title: 'Accounts', body: h('div', {}, creating.el, panel, h('h2', {}, 'All accounts'), listStatus, list) };
}
