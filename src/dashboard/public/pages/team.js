// @ts-check
// Team: the account's owner login, its members with their roles, pending invitations. Owners invite (the link is
// shown with a copy button, and mailed when the gateway has SMTP), change roles, remove members and revoke
// invitations; others see the same lists, read-only.
import { confirmDialog } from '../components/confirm.js';
import { copyBox } from '../components/copy.js';
import { Form } from '../components/form.js';
import { failed } from '../components/notice.js';
import { cardTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { focus, h, when } from '../lib/dom.js';

/** @typedef {import('../lib/types.js').Member} Member */
/** @typedef {import('../lib/types.js').Invitation} Invitation */
/** @typedef {{ owner: { email: string, name: string }, members: Member[], invitations: Invitation[] }} Team */

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function teamPage(ctx) {
  const lists = h('div', { id: 'team-lists' });
  const invited = h('div');
  const roleOptions = ctx.facts.roles.map((r) => ({ value: r.name, label: r.name }));
  const roleHelp = (/** @type {string} */ v) => ctx.facts.roles.find((r) => r.name === v)?.help ?? '';

  const refresh = async () => {
    try {
      draw(/** @type {Team} */ (await api('GET', '/account/members')));
      return true;
    } catch (err) {
      lists.replaceChildren(failed(err, 'Team members'));
      return false;
    }
  };

  /** @param {Member} m */
  const roleControl = (m) => {
    if (!ctx.can('manageTeam')) return m.role;
    const select = h('select', { 'aria-label': `Role of ${m.email}`, 'data-role-of': m.email }, ...ctx.facts.roles.map((r) => h('option', { value: r.name, selected: r.name === m.role }, r.name)));
    const say = h('span', { class: 'inline-status', role: 'status' });
    select.addEventListener('change', async () => {
      select.disabled = true;
      try {
        await api('PATCH', `/account/members/${encodeURIComponent(m.id)}`, { role: select.value });
        m.role = /** @type {Member['role']} */ (select.value);
        say.textContent = 'Saved.';
      } catch (err) {
        select.value = m.role;
        say.textContent = err instanceof Error ? err.message : String(err);
      } finally {
        select.disabled = false;
      }
    });
    return [select, say];
  };

  /** @param {Team} t */
  const draw = (t) => lists.replaceChildren(
    h('p', {}, 'Owner login: ', h('strong', {}, t.owner.name), ` (${t.owner.email})`),
    h('h2', {}, 'Members'),
    cardTable({
      id: 'members', caption: 'Members', empty: 'No members yet: invite your team.', rows: t.members, rowAttrs: (m) => ({ 'data-member': m.email }),
      columns: [
        { title: 'Name', cell: (m) => m.name }, { title: 'Email', cell: (m) => m.email }, { title: 'Role', cell: roleControl }, { title: 'Joined', cell: (m) => when(m.createdAt) },
        { title: 'Actions', cell: (m) => (ctx.can('manageTeam') ? h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${m.email}`, onclick: () => remove(m) }, 'Remove') : '') },
      ],
    }),
    h('h2', {}, 'Pending invitations'),
    cardTable({
      id: 'invitations', caption: 'Pending invitations', empty: 'No pending invitations.', rows: t.invitations, rowAttrs: (i) => ({ 'data-invitation': i.email }),
      columns: [
        { title: 'Email', cell: (i) => i.email }, { title: 'Role', cell: (i) => i.role }, { title: 'Expires', cell: (i) => when(i.expiresAt) },
        { title: 'Actions', cell: (i) => (ctx.can('manageTeam') ? h('button', { type: 'button', class: 'secondary', 'aria-label': `Revoke the invitation of ${i.email}`, onclick: () => revoke(i) }, 'Revoke') : '') },
      ],
    }));

  /** @param {Member} m */
  const remove = async (m) => {
    if (!(await confirmDialog({ title: `Remove ${m.email}?`, body: 'They are logged out at once and can no longer log in to this account.', confirm: 'Remove member', tone: 'danger' }))) return;
    await api('DELETE', `/account/members/${encodeURIComponent(m.id)}`).catch((err) => lists.prepend(failed(err, 'Removing')));
    await refresh();
  };
  /** @param {Invitation} i */
  const revoke = async (i) => {
    await api('DELETE', `/account/invitations/${encodeURIComponent(i.id)}`).catch((err) => lists.prepend(failed(err, 'Revoking')));
    await refresh();
  };

  const form = new Form({
    id: 'invite-form', title: 'Invite someone', submit: 'Create invitation', submitId: 'invite', busyLabel: 'Inviting…',
    fields: [
      { name: 'email', label: 'Email', type: 'email', id: 'invite-email', required: true },
      { name: 'role', label: 'Role', type: 'select', id: 'invite-role', value: 'developer', options: roleOptions, explain: roleHelp },
    ],
    onSubmit: async (v, f) => {
      const r = /** @type {{ invitation: Invitation, url: string, emailed: boolean }} */ (await api('POST', '/account/invitations', { email: v.email.trim(), role: v.role }));
      invited.replaceChildren(h('section', { class: 'card once' },
        h('p', {}, r.emailed ? `An invitation was mailed to ${r.invitation.email}. You can also pass on the link yourself:` : `Mail is not set up on this gateway: pass this link on to ${r.invitation.email} yourself.`),
        copyBox({ label: `Invitation link for ${r.invitation.email}`, value: r.url, id: 'invite-url', what: `invitation link for ${r.invitation.email}` }),
        h('p', { class: 'hint' }, `It works once, until ${when(r.invitation.expiresAt)}.`)));
      f.field('email').input.value = '';
      focus(/** @type {HTMLElement} */ (invited.querySelector('input')));
      await refresh();
    },
  });

  const ok = await refresh();
  return {
    title: 'Team',
    body: h('div', {}, ctx.can('manageTeam') && ok ? h('div', { class: 'card' }, form.el) : null, invited, lists,
      ctx.can('manageTeam') ? null : h('p', { class: 'notice' }, `Only an owner can invite, change roles or remove members; you are a ${ctx.role}.`)),
  };
}
