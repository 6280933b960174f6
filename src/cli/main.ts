#!/usr/bin/env node
import { groupUsage, runCommand, runGroup, takeWord } from './command.ts';
import { describeError, UsageError } from './errors.ts';
import { GROUPS, START } from './groups.ts';

const USAGE = `  nodegate ${START.usage}
      ${START.summary}
${Object.entries(GROUPS).map(([group, table]) => groupUsage(group, table)).join('\n')}

Every command takes --config FILE (or NODEGATE_CONFIG) and the environment overrides (NODEGATE_DATA_DIR,
DATABASE_URL...), and works on the store the gateway uses; see docs/cli.md and docs/configuration.md.
Exit status: 0 done, 1 not found or refused by what is stored, 2 wrong command, flag or value.`;

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  start: (argv) => runCommand('start', `  nodegate ${START.usage}`, START, argv),
  ...Object.fromEntries(Object.entries(GROUPS).map(([group, table]) => [group, (argv: string[]) => runGroup(group, table, argv)])),
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
