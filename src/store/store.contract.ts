import { describe } from 'node:test';
import { accountStoreContract } from './accounts/account-store.contract.ts';
import { alertStoreContract } from './alerts/alert-store.contract.ts';
import type { StoreContract } from './fixtures.contract.ts';
import { keyStoreContract } from './keys/key-store.contract.ts';
import { keyRulesContract } from './keys/key-rules.contract.ts';
import { mailStoreContract } from './mail/mail-store.contract.ts';
import { metaStoreContract } from './meta/meta-store.contract.ts';
import { planStoreContract } from './plans/plan-store.contract.ts';
import { requestStoreContract } from './requests/request-store.contract.ts';
import { sessionStoreContract } from './sessions/session-store.contract.ts';
import { teamStoreContract } from './team/team-store.contract.ts';
import { usageStoreContract } from './usage/usage-store.contract.ts';
import { webhookStoreContract } from './webhooks/webhook-store.contract.ts';

export { bigPlan, freePlan, newAccount, newKey } from './fixtures.contract.ts';

/**
 * The behaviour every variant of the store must have (STYLE principle 6), domain by domain: run by sqlite.test.ts and
 * postgres.test.ts, each with a factory answering an empty, migrated store.
 */
export function storeContract(name: string, make: () => Promise<import('./stores.ts').Stores>, options: Omit<StoreContract, 'make'> & { skip?: string }): void {
  const c: StoreContract = { make, sameDatabase: options.sameDatabase };
  describe(`${name} store`, { skip: options.skip }, () => {
    for (const part of [planStoreContract, accountStoreContract, keyStoreContract, keyRulesContract, sessionStoreContract, usageStoreContract, requestStoreContract, alertStoreContract, teamStoreContract, mailStoreContract, webhookStoreContract, metaStoreContract]) part(c);
  });
}
