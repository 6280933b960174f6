import { ValidationError } from '../../accounts/errors.ts';
import type { TeamService } from '../../accounts/team.ts';
import { MEMBER_ROLES } from '../../store/team/member.ts';
import type { Account, Role } from '../../store/accounts/account.ts';
import { JSON_FLAG, type Subcommand, type Values } from '../command.ts';
import { findAccount, withStore, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { gatewayUrl } from '../store-guard.ts';
import { nonEmpty, oneOf, required, someChange, str } from '../flags.ts';
import { fields, publicAccount, table } from '../format.ts';

const ROLES: readonly Role[] = ['operator', 'member'];
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A password from `--password-stdin` (all of stdin, one trailing newline dropped) or `--password`. */
async function password(v: Values): Promise<string | undefined> {
  if (v['password-stdin'] && v.password !== undefined) throw new UsageError('--password and --password-stdin: give one');
  if (!v['password-stdin']) return str(v, 'password');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

const row = (a: Account) => [a.id, a.email, a.name, a.role, a.status, a.planId, a.createdAt];

async function details(cx: Context, a: Account): Promise<string> {
  const keys = await cx.store.keys.listKeys(a.id);
  return fields([
    ['id', a.id], ['name', a.name], ['email', a.email], ['role', a.role], ['status', a.status], ['plan', a.planId],
    ['dashboard login', a.passwordHash ? 'yes (has a password)' : 'no (no password)'],
    ['keys', `${keys.filter((k) => !k.revokedAt).length} active, ${keys.filter((k) => k.revokedAt).length} revoked (nodegate keys list --account ${a.email})`],
    ['created', a.createdAt], ['updated', a.updatedAt],
  ]);
}

const shown = async (cx: Context, a: Account, headline: string) => ({ json: publicAccount(a), text: `${headline}${await details(cx, a)}` });

export const ACCOUNT_COMMANDS: Record<string, Subcommand> = {
  list: {
    usage: 'list [--json]',
    summary: 'list the accounts',
    options: JSON_FLAG,
    run: withStore(async (cx) => {
      const accounts = await cx.accounts.listAccounts();
      return { json: { accounts: accounts.map(publicAccount) }, text: table(['ID', 'EMAIL', 'NAME', 'ROLE', 'STATUS', 'PLAN', 'CREATED'], accounts.map(row), 'no accounts') };
    }),
  },
  show: {
    usage: 'show ID|EMAIL [--json]',
    summary: 'show an account',
    options: JSON_FLAG,
    args: ['ID|EMAIL'],
    run: withStore(async (cx, _v, [ref]) => shown(cx, await findAccount(cx, ref), '')),
  },
  create: {
    usage: 'create --name NAME --email EMAIL [--password-stdin | --password PASSWORD] [--role operator|member] [--plan ID] [--json]',
    summary: 'create an account (default: member, on accounts.defaultPlan; without a password it cannot log in)',
    options: { ...JSON_FLAG, name: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, 'password-stdin': { type: 'boolean' }, role: { type: 'string' }, plan: { type: 'string' } },
    run: withStore(async (cx, v) => {
      const account = await cx.accounts.createAccount({
        name: required(v, 'name', "the customer's name"),
        email: required(v, 'email', 'the login'),
        password: await password(v),
        role: oneOf(v, 'role', ROLES),
        planId: str(v, 'plan'),
      });
      return shown(cx, account, `Created account ${account.email}.\n`);
    }),
  },
  update: {
    usage: 'update ID|EMAIL [--name NAME] [--email EMAIL] [--plan ID] [--role operator|member] [--password-stdin] [--json]',
    summary: 'change an account (a new plan applies to its keys within a second)',
    options: { ...JSON_FLAG, name: { type: 'string' }, email: { type: 'string' }, 'password-stdin': { type: 'boolean' }, role: { type: 'string' }, plan: { type: 'string' } },
    args: ['ID|EMAIL'],
    run: withStore(async (cx, v, [ref]) => {
      const email = str(v, 'email')?.trim();
      if (email !== undefined && !EMAIL.test(email)) throw new ValidationError('email', 'must be an email address');
      const patch = { name: nonEmpty('name', str(v, 'name')), email, planId: str(v, 'plan'), role: oneOf(v, 'role', ROLES), password: await password(v) };
      someChange(patch, '--name, --email, --plan, --role, --password-stdin');
      const { id } = await findAccount(cx, ref);
      const defined = Object.fromEntries(Object.entries(patch).filter(([, x]) => x !== undefined));
      const account = await cx.accounts.updateAccount(id, defined);
      return shown(cx, account, `Updated account ${account.email}.\n`);
    }),
  },
  suspend: {
    usage: 'suspend ID|EMAIL [--json]',
    summary: "suspend an account: its keys are refused (401) from the next request, within a second on a running gateway",
    options: JSON_FLAG,
    args: ['ID|EMAIL'],
    run: withStore(async (cx, _v, [ref]) => {
      const account = await cx.accounts.suspendAccount((await findAccount(cx, ref)).id);
      return shown(cx, account, `Suspended account ${account.email}: its keys are refused until it is reactivated.\n`);
    }),
  },
  reactivate: {
    usage: 'reactivate ID|EMAIL [--json]',
    summary: 'reactivate a suspended account: its keys work again',
    options: JSON_FLAG,
    args: ['ID|EMAIL'],
    run: withStore(async (cx, _v, [ref]) => {
      const account = await cx.accounts.reactivateAccount((await findAccount(cx, ref)).id);
      return shown(cx, account, `Reactivated account ${account.email}.\n`);
    }),
  },
  invite: {
    usage: 'invite ID|EMAIL --email EMAIL [--role owner|developer|viewer] [--json]',
    summary: "invite someone to the account's team (developer by default): prints the link, single use, for accounts.inviteHours; also mailed when mail.smtp is set (a running gateway sends it)",
    options: { ...JSON_FLAG, email: { type: 'string' }, role: { type: 'string' } },
    args: ['ID|EMAIL'],
    run: withStore(async (cx, v, [ref]) => {
      const account = await findAccount(cx, ref);
      const role = oneOf(v, 'role', MEMBER_ROLES) ?? 'developer';
      const r = await (await teamOf(cx)).invite(account.id, required(v, 'email', 'who is invited'), role, 'The operator');
      return {
        json: r,
        text: `Invited ${r.invitation.email} to ${account.email} as ${role}${r.emailed ? ' (the link is mailed too)' : ''}. The link works once, until ${r.invitation.expiresAt}:\n  ${r.url}`,
      };
    }),
  },
  'reset-link': {
    usage: 'reset-link ID|EMAIL [--json]',
    summary: "a password reset link for the account's own login, to hand over (single use, for accounts.resetMinutes): for a gateway without mail",
    options: JSON_FLAG,
    args: ['ID|EMAIL'],
    run: withStore(async (cx, _v, [ref]) => {
      const account = await findAccount(cx, ref);
      const r = await (await teamOf(cx)).operatorResetLink(account.id);
      return { json: r, text: `A reset link for ${account.email}; it works once, until ${r.expiresAt}:\n  ${r.url}` };
    }),
  },
};

/**
 * The team service on the command's store: links name accounts.publicUrl, else the gateway's configured address;
 * mail goes to the store's outbox when mail.smtp is set, for a running gateway's sender to send.
 */
async function teamOf(cx: Context): Promise<TeamService> {
  const [{ TeamService, teamOptions }, { MailOutbox }, { pino }] = await Promise.all([import('../../accounts/team.ts'), import('../../mail/outbox.ts'), import('pino')]);
  const { config } = cx;
  const mail = new MailOutbox(cx.store.mail, Boolean(config.mail.smtp.host), pino({ level: 'warn' }, pino.destination(2)));
  return new TeamService(cx.store, cx.accounts, mail, teamOptions(config, () => gatewayUrl(config)));
}
