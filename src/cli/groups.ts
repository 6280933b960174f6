import type { Subcommand } from './command.ts';
import { ACCOUNT_COMMANDS } from './commands/accounts.ts';
import { CONFIG_COMMANDS } from './commands/config.ts';
import { KEY_COMMANDS } from './commands/keys.ts';
import { PLAN_COMMANDS } from './commands/plans.ts';
import { START } from './commands/start.ts';
import { USAGE_COMMANDS } from './commands/usage.ts';
import { WEBHOOK_COMMANDS } from './commands/webhooks.ts';

/** `nodegate start`: the one command that is not in a group. */
export { START };

/**
 * Every group of `nodegate GROUP SUB`, in the order the usage lists them: the one table main.ts dispatches on,
 * and the one README.md's command list is checked against (readme-commands.test.ts).
 */
export const GROUPS: Readonly<Record<string, Record<string, Subcommand>>> = {
  config: CONFIG_COMMANDS,
  plans: PLAN_COMMANDS,
  accounts: ACCOUNT_COMMANDS,
  keys: KEY_COMMANDS,
  usage: USAGE_COMMANDS,
  webhooks: WEBHOOK_COMMANDS,
};
