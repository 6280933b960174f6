import { randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.ts';
import type { AccountsService } from './service.ts';
import type { PlanStore } from '../store/plans/plan-store.ts';
import type { AccountStore } from '../store/accounts/account-store.ts';
import type { MetaStore } from '../store/meta/meta-store.ts';

/** Secrets made on first start, to show once and never again. */
export interface BootstrapSecrets {
  operatorEmail?: string;
  /** Only when generated here; a password given in NODEGATE_OPERATOR_PASSWORD is never echoed. */
  operatorPassword?: string;
  demoKey?: string;
  /** The demo account's login: generated, so the printed demo login works in the dashboard. */
  demoEmail?: string;
  demoPassword?: string;
}

const DEMO_EMAIL = 'demo@localhost';

/** Creates the configured plans the store does not have yet; existing plans are the operator's and stay as edited. */
export async function seedPlans(store: { plans: PlanStore; accounts: AccountStore; meta: MetaStore }, plans: Config['plans']): Promise<void> {
  for (const [id, p] of Object.entries(plans)) {
    if (!(await store.plans.getPlan(id))) await store.plans.createPlan({ id, ...p });
  }
}

/**
 * First start (docs/decisions.md §6): an operator login and a demo account on the default plan with one Standard key,
 * returned to be printed once. Recorded in the store's meta table (`accounts_bootstrapped`; a 0.1 store's `bootstrapped` predates accounts) so it happens exactly once per store.
 */
export async function bootstrap(store: { plans: PlanStore; accounts: AccountStore; meta: MetaStore }, accounts: AccountsService, config: Readonly<Config>, env: NodeJS.ProcessEnv = process.env): Promise<BootstrapSecrets> {
  await seedPlans(store, config.plans);
  if (await store.meta.getMeta('accounts_bootstrapped')) {
    await moveDemoToDeveloperPlan(store, accounts, config);
    return {};
  }
  const given = env.NODEGATE_OPERATOR_PASSWORD;
  const operatorPassword = given || randomBytes(18).toString('base64url');
  const operatorEmail = config.accounts.operatorEmail;
  if (!(await store.accounts.getAccountByEmail(operatorEmail))) {
    await accounts.createAccount({ name: 'Operator', email: operatorEmail, password: operatorPassword, role: 'operator' });
  }
  const demoPassword = randomBytes(18).toString('base64url');
  // The demo login's password is printed only when set here (an existing demo account's own password stays unknown).
  let demo = await store.accounts.getAccountByEmail(DEMO_EMAIL);
  let passwordSet = false;
  if (!demo) {
    demo = await accounts.createAccount({ name: 'Demo', email: DEMO_EMAIL, password: demoPassword });
    passwordSet = true;
  } else if (!demo.passwordHash) {
    demo = await accounts.updateAccount(demo.id, { password: demoPassword });
    passwordSet = true;
  }
  const { value } = await accounts.createKey(demo.id, { name: 'demo', type: 'Standard' });
  await store.meta.setMeta('accounts_bootstrapped', new Date().toISOString());
  return { operatorEmail, operatorPassword: given ? undefined : operatorPassword, demoKey: value, demoEmail: DEMO_EMAIL, demoPassword: passwordSet ? demoPassword : undefined };
}

/**
 * Stores bootstrapped before the development plan existed put the demo account on `growth`, where a deploy script
 * of 20 transactions is refused (a transaction costs ~400 units against a 660-unit bucket). Once per store, the
 * demo account moves to the configured default plan if it is still on that old default; an operator's own choice
 * (any other plan) is kept.
 */
async function moveDemoToDeveloperPlan(store: { plans: PlanStore; accounts: AccountStore; meta: MetaStore }, accounts: AccountsService, config: Readonly<Config>): Promise<void> {
  if (config.accounts.defaultPlan !== 'developer' || (await store.meta.getMeta('demo_plan_developer'))) return;
  const demo = await store.accounts.getAccountByEmail('demo@localhost');
  if (demo?.planId === 'growth' && (await store.plans.getPlan('developer'))) await accounts.updateAccount(demo.id, { planId: 'developer' });
  await store.meta.setMeta('demo_plan_developer', new Date().toISOString());
}
