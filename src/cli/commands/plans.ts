import type { Plan } from '../../store/plans/plan.ts';
import { PLAN_LIMIT_DEFAULTS, PLAN_LIMITS, REQUIRED_PLAN_LIMITS, type PlanLimit } from '../../config/plan-limits.ts';
import { StoreConflictError } from '../../store/store-errors.ts';
import type { PlanPatch } from '../../store/plans/plan-store.ts';
import { JSON_FLAG, type Options, type Subcommand, type Values } from '../command.ts';
import { named, withStore } from '../context.ts';
import { integer, nonEmpty, required, someChange, str, toggle } from '../flags.ts';
import { fields, table } from '../format.ts';

// Flags, columns and details come from the limits' one definition (config/plan-limits.ts).
const flagsOf = (l: PlanLimit): string[] => (l.type === 'boolean' ? [l.flag, `no-${l.flag}`] : [l.flag]);

export const PLAN_FLAGS: Options = {
  ...JSON_FLAG,
  name: { type: 'string' },
  ...Object.fromEntries(PLAN_LIMITS.flatMap(flagsOf).map((f) => [f, { type: PLAN_LIMITS.some((l) => l.type === 'boolean' && flagsOf(l).includes(f)) ? 'boolean' : 'string' }])),
} as Options;
const REQUIRED = PLAN_LIMITS.filter((l) => REQUIRED_PLAN_LIMITS.includes(l.name));
const OPTIONAL = PLAN_LIMITS.filter((l) => !REQUIRED_PLAN_LIMITS.includes(l.name));
const SETTINGS = OPTIONAL.map((l) => (l.type === 'boolean' ? `[--${l.flag}|--no-${l.flag}]` : `[--${l.flag} N]`)).join(' ');

/** The limits' bounds (config/plan-limits.ts), with errors naming the flag. */
function planPatch(v: Values): PlanPatch {
  const patch: Record<string, unknown> = { name: nonEmpty('name', str(v, 'name')) };
  for (const l of PLAN_LIMITS) patch[l.name] = l.type === 'boolean' ? toggle(v, l.flag) : integer(v, l.flag, l.minimum ?? 0, l.maximum);
  return patch as PlanPatch;
}

const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as Partial<T>;

const shown = (l: PlanLimit, p: Plan, yes = 'yes', no = 'no') => {
  const x = p[l.name];
  return typeof x === 'boolean' ? (x ? yes : no) : String(x);
};

const row = (p: Plan) => [p.id, p.name, ...PLAN_LIMITS.map((l) => shown(l, p))];

const details = (p: Plan) => fields([
  ['id', p.id], ['name', p.name],
  ...PLAN_LIMITS.map((l): [string, string] => [l.label, shown(l, p, 'included', 'not included')]),
  ['created', p.createdAt], ['updated', p.updatedAt],
]);

export const PLAN_COMMANDS: Record<string, Subcommand> = {
  list: {
    usage: 'list [--json]',
    summary: 'list the plans',
    options: JSON_FLAG,
    run: withStore(async (cx) => {
      const plans = await cx.accounts.listPlans();
      return { json: { plans }, text: table(['ID', 'NAME', ...PLAN_LIMITS.map((l) => l.column)], plans.map(row), 'no plans') };
    }),
  },
  show: {
    usage: 'show ID [--json]',
    summary: 'show a plan',
    options: JSON_FLAG,
    args: ['ID'],
    run: withStore(async (cx, _v, [id]) => {
      const plan = await named(cx.accounts.getPlan(id), `plan ${id}`);
      return { json: plan, text: details(plan) };
    }),
  },
  create: {
    usage: `create --id ID --name NAME ${REQUIRED.map((l) => `--${l.flag} N`).join(' ')} ${SETTINGS} [--json]`,
    summary: `create a plan (defaults: ${OPTIONAL.map((l) => `${l.label} ${l.type === 'boolean' ? (l.default ? 'included' : 'not included') : l.default}`).join(', ')})`,
    options: { ...PLAN_FLAGS, id: { type: 'string' } },
    run: withStore(async (cx, v) => {
      const id = required(v, 'id', 'lowercase letters, digits and dashes');
      required(v, 'name', 'shown to customers');
      for (const l of REQUIRED) required(v, l.flag, l.unit);
      const p = planPatch(v);
      const plan = await cx.accounts.createPlan({ ...PLAN_LIMIT_DEFAULTS, ...defined(p), id, name: p.name! } as Parameters<typeof cx.accounts.createPlan>[0]);
      return { json: plan, text: `Created plan ${plan.id}.\n${details(plan)}` };
    }),
  },
  update: {
    usage: `update ID [--name NAME] ${REQUIRED.map((l) => `[--${l.flag} N]`).join(' ')} ${SETTINGS} [--json]`,
    summary: 'change a plan; every account on it has the new limits within a second',
    options: PLAN_FLAGS,
    args: ['ID'],
    run: withStore(async (cx, v, [id]) => {
      const patch = planPatch(v);
      someChange(patch, ['name', ...PLAN_LIMITS.flatMap(flagsOf)].map((f) => `--${f}`).join(', '));
      const plan = await named(cx.accounts.updatePlan(id, defined(patch)), `plan ${id}`);
      return { json: plan, text: `Updated plan ${plan.id}.\n${details(plan)}` };
    }),
  },
  delete: {
    usage: 'delete ID [--json]',
    summary: 'delete a plan no account is on (a plan of the configuration must be removed there first)',
    options: JSON_FLAG,
    args: ['ID'],
    run: withStore(async (cx, _v, [id]) => {
      // Every start (and every CLI command) creates the configured plans the store lacks: deleting one would not last.
      if (Object.hasOwn(cx.config.plans, id)) {
        throw new StoreConflictError(`plan "${id}" is in the configuration (plans.${id}) and would be re-created at the next start; remove it there first`);
      }
      await named(cx.accounts.deletePlan(id), `plan ${id}`);
      return { json: { deleted: id }, text: `Deleted plan ${id}.` };
    }),
  },
};
