import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GROUPS, START } from './groups.ts';

/**
 * README.md's command list is kept equal to the commands the CLI dispatches on (groups.ts): a reader who learns the
 * CLI from the README sees every command, and no command that is gone. A line of the list is
 * `npx nodegate GROUP SUB|SUB ...` (or `npx nodegate start ...`); what follows the subcommands is not compared
 * (docs/cli.md has every flag).
 */

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The commands README.md's "## Commands" section lists, as `start` or `GROUP SUB`. */
function readmeCommands(md: string): string[] {
  const section = md.slice(md.indexOf('\n## Commands\n'));
  const block = section.slice(section.indexOf('```sh\n') + 6, section.indexOf('\n```', section.indexOf('```sh\n')));
  const commands: string[] = [];
  for (const line of block.split('\n')) {
    const words = line.replace(/#.*$/, '').trim().split(/\s+/);
    if (words[0] !== 'npx' || words[1] !== 'nodegate') continue;
    const [group, subs] = words.slice(2);
    if (group === 'start') commands.push('start');
    else for (const sub of (subs ?? '').split('|')) commands.push(`${group} ${sub}`);
  }
  return commands;
}

/** The commands the CLI runs: `start` and every `GROUP SUB` of groups.ts. */
function cliCommands(): string[] {
  const first = START.usage.split(' ')[0];
  return [first, ...Object.entries(GROUPS).flatMap(([group, table]) => Object.keys(table).map((sub) => `${group} ${sub}`))];
}

/** What one list has that the other lacks, each side named; empty when they are equal. */
function drift(readme: string[], cli: string[]): string[] {
  const missing = cli.filter((c) => !readme.includes(c));
  const extra = readme.filter((c) => !cli.includes(c));
  return [
    ...(missing.length ? [`README.md lacks: ${missing.join(', ')}`] : []),
    ...(extra.length ? [`README.md lists, but the CLI has no: ${extra.join(', ')}`] : []),
  ];
}

test("README.md's command list has every command of the CLI and no other", () => {
  assert.deepEqual(drift(readmeCommands(README), cliCommands()), []);
});

test('the comparison names a command the README lacks and one the CLI lacks', () => {
  const edited = README.replace(/^npx nodegate webhooks .*$/m, 'npx nodegate webhooks list').replace(/^(npx nodegate plans \S+)/m, '$1|archive');
  assert.notEqual(edited, README, 'the README lines this test edits exist');
  assert.deepEqual(drift(readmeCommands(edited), cliCommands()), [
    'README.md lacks: webhooks deliveries',
    'README.md lists, but the CLI has no: plans archive',
  ]);
});

test('the command list is read from the README', () => {
  const commands = readmeCommands(README);
  assert.ok(commands.includes('start') && commands.includes('keys create'), `read: ${commands.join(', ')}`);
});
