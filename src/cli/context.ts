import { NotFoundError } from '../accounts/errors.ts';
import type { Account } from '../store/accounts/account.ts';
import type { AccountsService } from '../accounts/service.ts';
import type { Config } from '../config/schema.ts';
import { describeStore, refuseStrayStore } from './store-guard.ts';
import type { Stores } from '../store/stores.ts';
import type { Output, Values } from './command.ts';

/** What a management command works on: the store the gateway uses (SQLite in dataDir, or DATABASE_URL). */
export interface Context {
  config: Readonly<Config>;
  store: Stores;
  accounts: AccountsService;
}

type Handler = (cx: Context, values: Values, args: string[]) => Promise<Output>;

/**
 * Wraps a command that works on the store: opens it, creates the configured plans it lacks (so a fresh data
 * directory works before the first start), and closes it afterwards. Changes need nothing more to reach a
 * running gateway: it re-reads a key from the store once its cache entry is older than auth.keyCacheTtlMs.
 */
export function withStore(handler: Handler) {
  return async (config: Readonly<Config>, values: Values, args: string[]): Promise<Output> => {
    // Loaded when a command runs, not when the CLI starts: `nodegate --help` needs none of them.
    const [{ seedPlans }, { accountsCatalogue }, { AccountsService }, { openStore }] = await Promise.all([
      import('../accounts/bootstrap.ts'), import('../accounts/catalogue.ts'), import('../accounts/service.ts'), import('../store/open-store.ts'),
    ]);
    const names = accountsCatalogue(config);
    await refuseStrayStore(config, values['new-store'] === true);
    // Which store, on every command: a change made to the wrong one is otherwise silent. stderr keeps --json clean.
    process.stderr.write(`store: ${describeStore(config)}\n`);
    const store = await openStore(config);
    try {
      await seedPlans(store, config.plans);
      return await handler({ config, store, accounts: new AccountsService(store, names) }, values, args);
    } finally {
      await store.close();
    }
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs: anything else is not found without asking the store (PostgreSQL would refuse to compare it). */
export const isId = (s: string) => UUID.test(s);

/** An account by id or email (emails contain `@`; compared case-insensitively). */
export async function findAccount(cx: Context, ref: string): Promise<Account> {
  const account = ref.includes('@') ? await cx.store.accounts.getAccountByEmail(ref) : isId(ref) ? await cx.store.accounts.getAccount(ref) : undefined;
  if (!account) throw new NotFoundError(`account ${ref}`);
  return account;
}

/** Names what was not found in the service's NotFoundError: `plan pro not found` rather than `plan not found`. */
export async function named<T>(op: Promise<T>, what: string): Promise<T> {
  try {
    return await op;
  } catch (err) {
    throw err instanceof NotFoundError ? new NotFoundError(what) : err;
  }
}
