import type { Plan } from '../../accounts/model.ts';
import { StoreConflictError, type PlanPatch } from '../../store/store.ts';
import { JSON_FLAG, runGroup, type Options, type Subcommand, type Values } from '../command.ts';
import { named, withStore } from '../context.ts';
import { integer, nonEmpty, required, someChange, str, toggle } from '../flags.ts';
import { fields, table } from '../format.ts';

const PLAN_FLAGS: Options = {
  ...JSON_FLAG,
  name: { type: 'string' },
  'cu-per-second': { type: 'string' },
  'cu-per-month': { type: 'string' },
  'max-batch-size': { type: 'string' },
  'debug-methods': { type: 'boolean' },
  'no-debug-methods': { type: 'boolean' },
  'max-filters': { type: 'string' },
  'max-keys': { type: 'string' },
  'max-webhooks': { type: 'string' },
};
const SETTINGS = '[--max-batch-size N] [--debug-methods|--no-debug-methods] [--max-filters N] [--max-keys N] [--max-webhooks N]';

/** The same bounds as a plan in the configuration (config/schema.ts). */
function planPatch(v: Values): PlanPatch {
  return {
    name: nonEmpty('name', str(v, 'name')),
    cuPerSecond: integer(v, 'cu-per-second', 1),
    cuPerMonth: integer(v, 'cu-per-month', 1),
    maxBatchSize: integer(v, 'max-batch-size', 1, 1000),
    debugMethods: toggle(v, 'debug-methods'),
    maxFilters: integer(v, 'max-filters', 0),
    maxKeys: integer(v, 'max-keys', 1),
    maxWebhooks: integer(v, 'max-webhooks', 0),
  };
}

const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as Partial<T>;

const row = (p: Plan) => [p.id, p.name, String(p.cuPerSecond), String(p.cuPerMonth), String(p.maxBatchSize), p.debugMethods ? 'yes' : 'no', String(p.maxFilters), String(p.maxKeys), String(p.maxWebhooks)];

const details = (p: Plan) => fields([
  ['id', p.id], ['name', p.name], ['compute units per second (per account)', String(p.cuPerSecond)],
  ['compute units per month (per account)', String(p.cuPerMonth)], ['max batch size', String(p.maxBatchSize)],
  ['debug methods', p.debugMethods ? 'included' : 'not included'], ['max filters (per account)', String(p.maxFilters)],
  ['max keys (per account)', String(p.maxKeys)],
  ['max webhooks (per account)', String(p.maxWebhooks)],
  ['created', p.createdAt], ['updated', p.updatedAt],
]);

export const PLAN_COMMANDS: Record<string, Subcommand> = {
  list: {
    usage: 'list [--json]',
    summary: 'list the plans',
    options: JSON_FLAG,
    run: withStore(async (cx) => {
      const plans = await cx.accounts.listPlans();
      return { json: { plans }, text: table(['ID', 'NAME', 'CU/S', 'CU/MONTH', 'MAX BATCH', 'DEBUG', 'MAX FILTERS', 'MAX KEYS', 'MAX WEBHOOKS'], plans.map(row), 'no plans') };
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
    usage: `create --id ID --name NAME --cu-per-second N --cu-per-month N ${SETTINGS} [--json]`,
    summary: 'create a plan (defaults: max batch size 100, no debug methods, 100 filters, 100 keys)',
    options: { ...PLAN_FLAGS, id: { type: 'string' } },
    run: withStore(async (cx, v) => {
      const id = required(v, 'id', 'lowercase letters, digits and dashes');
      required(v, 'name', 'shown to customers');
      required(v, 'cu-per-second', 'compute units per second, per account');
      required(v, 'cu-per-month', 'compute units per month, per account');
      const p = planPatch(v);
      const plan = await cx.accounts.createPlan({
        id, name: p.name!, cuPerSecond: p.cuPerSecond!, cuPerMonth: p.cuPerMonth!,
        maxBatchSize: p.maxBatchSize ?? 100, debugMethods: p.debugMethods ?? false, maxFilters: p.maxFilters ?? 100, maxKeys: p.maxKeys ?? 100, maxWebhooks: p.maxWebhooks ?? 20,
      });
      return { json: plan, text: `Created plan ${plan.id}.\n${details(plan)}` };
    }),
  },
  update: {
    usage: `update ID [--name NAME] [--cu-per-second N] [--cu-per-month N] ${SETTINGS} [--json]`,
    summary: 'change a plan; every account on it has the new limits within a second',
    options: PLAN_FLAGS,
    args: ['ID'],
    run: withStore(async (cx, v, [id]) => {
      const patch = planPatch(v);
      someChange(patch, '--name, --cu-per-second, --cu-per-month, --max-batch-size, --debug-methods, --no-debug-methods, --max-filters, --max-keys, --max-webhooks');
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

export const plans = (argv: string[]) => runGroup('plans', PLAN_COMMANDS, argv);
