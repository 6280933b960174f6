// @ts-check
// Operator: plans. The table first; "New plan" opens the form, Edit opens it for one plan, Delete removes a plan no
// account is on (else the server's 409 is said in its row). The table and the form follow the plan limits' one
// definition (from the facts): each limit with its human label and unit; numbers in words where they are huge.
import { confirmDialog } from '../components/confirm.js';
import { Form } from '../components/form.js';
import { cardTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { compact, focus, h } from '../lib/dom.js';
import { capital } from '../lib/facts.js';

/** @typedef {import('../lib/types.js').Plan} Plan */

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function operatorPlansPage(ctx) {
  const limits = ctx.facts.planLimits;
  const list = h('div');
  const editor = h('div', { id: 'plan-editor' });
  /** @type {Plan[]} */
  let plans = [];

  const refresh = async () => {
    plans = /** @type {{ plans: Plan[] }} */ (await api('GET', '/operator/plans')).plans;
    // One column per plan limit: more than a 1280 px page holds, so the table scrolls in its own box, not the page.
    list.replaceChildren(h('div', { class: 'table-scroll', role: 'region', 'aria-label': 'Plans and their limits', tabindex: '0' }, cardTable({
      id: 'plans', caption: 'Plans and their limits', empty: 'No plans.', rows: plans, rowAttrs: (p) => ({ 'data-plan': p.id }),
      columns: [
        { title: 'Plan', cell: (p) => h('span', {}, h('strong', {}, p.name), ` (${p.id})`) },
        ...limits.map((l) => ({
          title: capital(l.label),
          cell: (/** @type {Plan} */ p) => {
            const v = p[l.name];
            return h('span', { 'data-limit': l.name }, typeof v === 'boolean' ? (v ? 'yes' : 'no') : compact(Number(v)));
          },
        })),
        { title: 'Actions', cell: (p) => [h('button', { type: 'button', class: 'secondary', 'data-edit-plan': p.id, 'aria-label': `Edit the plan ${p.name}`, onclick: () => edit(p) }, 'Edit'), deleteButton(p)] },
      ],
    })));
  };

  /** @param {Plan} p */
  const deleteButton = (p) => {
    const say = h('span', { class: 'inline-status bad', role: 'alert', 'data-delete-error': p.id });
    const b = h('button', {
      type: 'button', class: 'danger', 'data-delete-plan': p.id, 'aria-label': `Delete the plan ${p.name}`,
      onclick: async () => {
        say.textContent = '';
        if (!(await confirmDialog({ title: `Delete the plan ${p.name}?`, body: 'Only a plan no account is on can be deleted. This cannot be undone.', confirm: 'Delete plan', tone: 'danger' }))) return;
        b.disabled = true;
        try {
          await api('DELETE', `/operator/plans/${encodeURIComponent(p.id)}`);
          await refresh();
          status.textContent = `Plan ${p.id} deleted.`;
          focus(status);
        } catch (err) {
          b.disabled = false;
          say.textContent = `Not deleted: ${err instanceof Error ? err.message : String(err)}`;
        }
      },
    }, 'Delete');
    return h('span', { class: 'action' }, b, say);
  };
  const status = h('p', { class: 'inline-status', role: 'status', id: 'plan-list-status' });
  const newPlan = h('button', { type: 'button', id: 'new-plan-open', 'aria-expanded': 'false', 'aria-controls': 'plan-editor', onclick: () => edit() }, 'New plan');

  /** The form, for a new plan or for `plan`. @param {Plan} [plan] */
  const edit = (plan) => {
    /** @type {import('../components/form.js').FieldSpec[]} */
    const fields = [
      { name: 'id', label: 'Id', id: 'plan-id', required: !plan, value: plan?.id ?? '', hint: plan ? 'Fixed: accounts refer to it.' : 'Lower-case letters, digits and dashes, like growth.', attrs: plan ? { readonly: 'readonly' } : {} },
      { name: 'name', label: 'Name', id: 'plan-name', required: true, value: plan?.name ?? '' },
      ...limits.map((l) => /** @type {import('../components/form.js').FieldSpec} */ ({
        name: l.name, label: l.type === 'boolean' ? capital(l.label) : `${capital(l.label)} (${l.unit})`, id: `plan-${l.name}`, type: l.type === 'boolean' ? 'checkbox' : 'number',
        value: plan ? plan[l.name] : l.default ?? '', required: l.default === undefined && l.type !== 'boolean', hint: l.help,
        attrs: l.type === 'boolean' ? {} : { min: l.minimum ?? 0, ...(l.maximum !== undefined ? { max: l.maximum } : {}), step: 1 },
      })),
    ];
    const form = new Form({
      id: 'plan-form', title: plan ? `Change the plan ${plan.id} (effective on the next request)` : 'Create a plan',
      submit: plan ? 'Save plan' : 'Create plan', submitId: plan ? 'save-plan' : 'create-plan', busyLabel: 'Saving…', fields,
      cancel: close,
      onSubmit: async (v) => {
        const { id, ...values } = v;
        const body = Object.fromEntries(Object.entries(values).filter(([, x]) => x !== undefined && x !== ''));
        if (plan) await api('PATCH', `/operator/plans/${encodeURIComponent(plan.id)}`, body);
        else await api('POST', '/operator/plans', { id, ...body });
        await refresh();
        close();
        status.textContent = `Plan ${plan?.id ?? id} saved.`;
        focus(status);
      },
    });
    editor.replaceChildren(h('section', { class: 'card' }, form.el));
    newPlan.setAttribute('aria-expanded', String(!plan));
    focus(/** @type {HTMLElement} */ (form.el.querySelector(plan ? '#plan-name' : '#plan-id')));
  };
  const close = () => {
    editor.replaceChildren();
    newPlan.setAttribute('aria-expanded', 'false');
    newPlan.focus();
  };

  await refresh();
  return { title: 'Plans', body: h('div', {}, h('p', { class: 'actions' }, newPlan), editor, status, list) };
}
