#!/usr/bin/env node
import { groupUsage, runCommand, takeWord } from './command.ts';
import { accounts, ACCOUNT_COMMANDS } from './commands/accounts.ts';
import { CONFIG_COMMANDS, configCommand } from './commands/config.ts';
import { keys, KEY_COMMANDS } from './commands/keys.ts';
import { PLAN_COMMANDS, plans } from './commands/plans.ts';
import { START } from './commands/start.ts';
import { usage, USAGE_COMMANDS } from './commands/usage.ts';
import { webhooks, WEBHOOK_COMMANDS } from './commands/webhooks.ts';
import { describeError, UsageError } from './errors.ts';

const USAGE = `  nodegate ${START.usage}
      ${START.summary}
${groupUsage('config', CONFIG_COMMANDS)}
${groupUsage('plans', PLAN_COMMANDS)}
${groupUsage('accounts', ACCOUNT_COMMANDS)}
${groupUsage('keys', KEY_COMMANDS)}
${groupUsage('usage', USAGE_COMMANDS)}
${groupUsage('webhooks', WEBHOOK_COMMANDS)}

Every command takes --config FILE (or NODEGATE_CONFIG) and the environment overrides (NODEGATE_DATA_DIR,
DATABASE_URL...), and works on the store the gateway uses; see docs/cli.md and docs/configuration.md.
Exit status: 0 done, 1 not found or refused by what is stored, 2 wrong command, flag or value.`;

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  start: (argv) => runCommand('start', `  nodegate ${START.usage}`, START, argv),
  config: configCommand,
  plans,
  accounts,
  keys,
  usage,
  webhooks,
};

async function main(argv: string[]): Promise<number> {
  const [cmd, rest] = takeWord(argv);
  if (!cmd) {
    if (rest.includes('--help') || rest.includes('-h')) return console.log(`usage:\n${USAGE}`), 0;
    throw new UsageError('a command is needed', USAGE);
  }
  if (!Object.hasOwn(COMMANDS, cmd)) throw new UsageError(`unknown command: ${cmd}`, USAGE);
  return COMMANDS[cmd](rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    const { message, code } = describeError(err);
    console.error(message);
    process.exit(code);
  },
);
