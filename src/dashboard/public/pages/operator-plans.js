// @ts-check
// Operator: plans. The table and the form follow the plan limits' one definition (from the facts): each limit
// with its human label and unit; numbers in words where they are huge.
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
    list.replaceChildren(cardTable({
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
        { title: 'Actions', cell: (p) => h('button', { type: 'button', class: 'secondary', 'data-edit-plan': p.id, 'aria-label': `Edit the plan ${p.name}`, onclick: () => edit(p) }, 'Edit') },
      ],
    }));
  };

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
      cancel: plan ? () => edit() : undefined,
      onSubmit: async (v) => {
        const { id, ...values } = v;
        const body = Object.fromEntries(Object.entries(values).filter(([, x]) => x !== undefined && x !== ''));
        if (plan) await api('PATCH', `/operator/plans/${encodeURIComponent(plan.id)}`, body);
        else await api('POST', '/operator/plans', { id, ...body });
        await refresh();
        edit();
        return `Plan ${plan?.id ?? id} saved.`;
      },
    });
    editor.replaceChildren(h('section', { class: 'card' }, form.el));
    if (plan) focus(/** @type {HTMLElement} */ (form.el.querySelector('#plan-name')));
  };

  await refresh();
  edit();
  return { title: 'Plans', body: h('div', {}, list, editor) };
}
