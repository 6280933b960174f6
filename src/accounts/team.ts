import type { Config } from '../config/schema.ts';
import { randomUUID } from 'node:crypto';
import type { MailQueue } from '../mail/mail-queue.ts';
import { MEMBER_ROLES, type Member, type MemberRole } from '../store/team/member.ts';
import type { Account } from '../store/accounts/account.ts';
import { StoreConflictError } from '../store/store-errors.ts';
import type { AccountToken, TokenStore } from '../store/team/token-store.ts';
import { NotFoundError, TooManyError, ValidationError } from './errors.ts';
import type { InvitationBounds } from './invitation-bounds.ts';
import { hashPassword } from './password.ts';
import type { AccountsService } from './service.ts';
import { newToken, tokenHash } from './tokens.ts';
import { grantRefusal } from './key-grants.ts';
import type { AccountStore } from '../store/accounts/account-store.ts';
import type { KeyStore } from '../store/keys/key-store.ts';
import type { SessionStore } from '../store/sessions/session-store.ts';
import type { MemberStore } from '../store/team/member-store.ts';

export interface TeamOptions {
  inviteHours: number;
  resetMinutes: number;
  openSignup: boolean;
  signupPlan: string;
  /** The dashboard's public origin for links (accounts.publicUrl, else the address listened on): never a request's Host. */
  publicBase: () => string;
  now?: () => number;
  /** Invitations per account and invitation mails per recipient (the API's); none: unbounded (the CLI). */
  invitations?: InvitationBounds;
}

/** The options of the configuration (accounts.*), with the origin links name when accounts.publicUrl is not set. */
export function teamOptions(config: Pick<Config, 'accounts'>, fallbackBase: () => string): TeamOptions {
  const a = config.accounts;
  return {
    inviteHours: a.inviteHours, resetMinutes: a.resetMinutes, openSignup: a.openSignup,
    signupPlan: a.signupPlan ?? a.defaultPlan, publicBase: () => a.publicUrl || fallbackBase(),
  };
}

/** A login: an account's own (member undefined), or one of its members. */
export interface Login {
  account: Account;
  member?: Member;
}

export interface InvitationView { id: string; email: string; role: MemberRole; expiresAt: string; createdAt: string }
export interface MemberView { id: string; email: string; name: string; role: MemberRole; createdAt: string }

/** The one answer to a bad, used or expired link (which of them it was is nobody's business). */
export const BAD_LINK = 'the link is invalid or has expired';
export const MIN_PASSWORD = 12;

export const invitationView = (t: AccountToken): InvitationView => ({ id: t.id, email: t.email, role: t.role!, expiresAt: t.expiresAt, createdAt: t.createdAt });
export const memberView = (m: Member): MemberView => ({ id: m.id, email: m.email, name: m.name, role: m.role, createdAt: m.createdAt });

/**
 * Team members, invitations, sign-up and password resets. Every link carries a single-use token
 * (tokens.ts) that expires; the store consumes it in one statement, so a link works once even when used twice at
 * the same moment. An email is one login: an account's or a member's, never both.
 */
export class TeamService {
  private readonly now: () => number;

  constructor(private readonly store: { accounts: AccountStore; keys: KeyStore; sessions: SessionStore; members: MemberStore; tokens: TokenStore }, private readonly accounts: AccountsService, private readonly mail: MailQueue, private readonly opts: TeamOptions) {
    this.now = opts.now ?? Date.now;
  }

  get signupOpen(): boolean {
    return this.opts.openSignup;
  }

  /** The account's own login, its members and its pending invitations. */
  async team(accountId: string): Promise<{ owner: { email: string; name: string }; members: MemberView[]; invitations: InvitationView[] }> {
    const account = await this.accounts.getAccount(accountId);
    const [members, invitations] = await Promise.all([this.store.members.listMembers(accountId), this.store.tokens.listInvitations(accountId, this.iso())]);
    return { owner: { email: account.email, name: account.name }, members: members.map(memberView), invitations: invitations.map(invitationView) };
  }

  /**
   * Invites `email` to the account with `role`: a link (answered, and mailed when mail is configured). The answer is
   * the same whether the email already has a login or not (no enumeration): the invitation is made either way, and
   * its mail tells an address that already has a login that it cannot join with it (an email is one login), which
   * accepting then says too. `byOperator` invitations are not counted against the account's budget.
   */
  async invite(accountId: string, email: string, role: MemberRole, invitedBy: string, byOperator = false): Promise<{ invitation: InvitationView; url: string; emailed: boolean }> {
    const account = await this.accounts.getAccount(accountId);
    const address = checkEmail(email);
    checkRole(role);
    const bounds = this.opts.invitations;
    const wait = byOperator ? undefined : await bounds?.perAccount.spend(accountId);
    if (wait !== undefined) throw new TooManyError(wait, 'too many invitations from this account just now');
    const taken = await this.taken(address);
    const { value, hash } = newToken();
    const now = this.now();
    const token: AccountToken = {
      idHash: hash, id: randomUUID(), kind: 'invite', accountId, memberId: null, email: address, role,
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + this.opts.inviteHours * 3_600_000).toISOString(), usedAt: null,
    };
    await this.store.tokens.createAccountToken(token);
    const url = this.link('accept', value);
    // Past the recipient's budget the mail is quietly not sent (invitation-bounds.ts): the answer stays the same.
    if (this.mail.configured && (await bounds?.perRecipient.spend(address.toLowerCase())) === undefined) {
      const intro = `${invitedBy} invited you to the account "${account.name}" on Nodegate, as ${role}.`;
      await this.mail.enqueue({
        to: address, subject: `You are invited to ${account.name} on Nodegate`,
        text: taken
          ? `${intro}\n\nThis address already has a Nodegate login here, and an address has one login only, so the invitation cannot be accepted with it. To join, ask for an invitation to another address. If you did not expect this, ignore it.\n`
          : `${intro}\n\nChoose your name and password here:\n${url}\n\nThe link works once, until ${token.expiresAt}. If you did not expect it, ignore this message.\n`,
      });
    }
    return { invitation: invitationView(token), url, emailed: this.mail.configured };
  }

  async withdrawInvitation(accountId: string, id: string): Promise<void> {
    if (!(await this.store.tokens.deleteInvitation(accountId, id))) throw new NotFoundError('invitation');
  }

  /** Changes a member's role; the keys they made with more than the new role may grant are revoked. */
  async changeRole(accountId: string, memberId: string, role: MemberRole): Promise<MemberView> {
    checkRole(role);
    await this.memberOf(accountId, memberId);
    const changed = memberView((await this.store.members.updateMember(memberId, { role }))!);
    const account = await this.accounts.getAccount(accountId);
    const limit = { role, person: true, accountRole: account.role };
    for (const key of await this.store.keys.listKeys(accountId)) {
      if (key.createdBy === memberId && !key.revokedAt && grantRefusal(limit, key.permissions)) await this.accounts.revokeKey(key.id, accountId);
    }
    return changed;
  }

  /**
   * Removes a member; its sessions end with it (the store cascades), and the keys it made are revoked first: a key
   * is no way to stay in the account after leaving it.
   */
  async remove(accountId: string, memberId: string): Promise<void> {
    await this.memberOf(accountId, memberId);
    await this.accounts.revokeKeysMadeBy(memberId);
    await this.store.members.deleteMember(memberId);
  }

  /** What an invitation's link is for, before it is accepted: the account's name, the role and the email invited. */
  async invitation(token: string): Promise<{ account: string; role: MemberRole; email: string }> {
    const t = await this.store.tokens.findAccountToken(tokenHash(token ?? ''), 'invite', this.iso());
    const account = t && (await this.store.accounts.getAccount(t.accountId));
    if (!t || !account || account.status !== 'active') throw new ValidationError('token', BAD_LINK);
    return { account: account.name, role: t.role ?? 'viewer', email: t.email };
  }

  /** A new member from an invitation's token: the token is spent only by a valid name and password. */
  async accept(token: string, name: string, password: string): Promise<Login> {
    const display = checkName(name);
    await checkPassword(password);
    const used = await this.store.tokens.consumeAccountToken(tokenHash(token ?? ''), 'invite', this.iso());
    if (!used) throw new ValidationError('token', BAD_LINK);
    const account = await this.store.accounts.getAccount(used.accountId);
    if (!account || account.status !== 'active') throw new ValidationError('token', BAD_LINK);
    await this.refuseTaken(used.email);
    const member = await this.store.members.createMember({
      id: randomUUID(), accountId: account.id, email: used.email, name: display, passwordHash: await hashPassword(password), role: used.role ?? 'viewer',
    });
    return { account, member };
  }

  /** Open sign-up (accounts.openSignup): an account of its own on accounts.signupPlan. */
  async signup(name: string, email: string, password: string): Promise<Login> {
    const address = checkEmail(email);
    await this.refuseTaken(address);
    const account = await this.accounts.createAccount({ name, email: address, password, planId: this.opts.signupPlan });
    return { account };
  }

  /**
   * A reset link mailed to the login with this email, if there is one and mail is configured; nothing otherwise.
   * Called off the response path (the answer is the same either way, and takes the same time).
   */
  async requestReset(email: string): Promise<void> {
    const login = await this.loginByEmail(email);
    if (!login || login.account.status !== 'active' || !this.mail.configured) return;
    const { url, expiresAt } = await this.resetLink(login);
    await this.mail.enqueue({
      to: login.member?.email ?? login.account.email, subject: 'Reset your Nodegate password',
      text: `Someone (hopefully you) asked to reset the password of ${login.member?.email ?? login.account.email} on Nodegate.\n\nChoose a new password here:\n${url}\n\nThe link works once, until ${expiresAt}. If you did not ask, ignore this message: your password stays as it is.\n`,
    });
  }

  /** The operator's reset link for an account's own login (when mail is not configured, it is handed over by hand). */
  async operatorResetLink(accountId: string): Promise<{ url: string; expiresAt: string }> {
    return this.resetLink({ account: await this.accounts.getAccount(accountId) });
  }

  /** Sets the password of the token's login and ends every session of that login. */
  async completeReset(token: string, password: string): Promise<Login> {
    await checkPassword(password);
    const used = await this.store.tokens.consumeAccountToken(tokenHash(token ?? ''), 'reset', this.iso());
    if (!used) throw new ValidationError('token', BAD_LINK);
    const account = await this.store.accounts.getAccount(used.accountId);
    if (!account || account.status !== 'active') throw new ValidationError('token', BAD_LINK);
    if (used.memberId) {
      const member = await this.store.members.updateMember(used.memberId, { passwordHash: await hashPassword(password) });
      if (!member) throw new ValidationError('token', BAD_LINK);
      await this.store.sessions.deleteSessionsOf(account.id, member.id);
      return { account, member };
    }
    const updated = await this.accounts.updateAccount(account.id, { password });
    await this.store.sessions.deleteSessionsOf(account.id, null);
    return { account: updated };
  }

  /** Sets a member's own password (the member's password change); ends that member's sessions. */
  async setMemberPassword(member: Member, password: string): Promise<Member> {
    await checkPassword(password);
    const updated = (await this.store.members.updateMember(member.id, { passwordHash: await hashPassword(password) }))!;
    await this.store.sessions.deleteSessionsOf(member.accountId, member.id);
    return updated;
  }

  /** The login whose email this is: an account's own, or a member's (with its account). */
  async loginByEmail(email: string): Promise<Login | undefined> {
    const account = await this.store.accounts.getAccountByEmail(email);
    if (account) return { account };
    const member = await this.store.members.getMemberByEmail(email);
    const of = member && (await this.store.accounts.getAccount(member.accountId));
    return of ? { account: of, member } : undefined;
  }

  private async resetLink(login: Login): Promise<{ url: string; expiresAt: string }> {
    const { value, hash } = newToken();
    const now = this.now();
    const expiresAt = new Date(now + this.opts.resetMinutes * 60_000).toISOString();
    await this.store.tokens.createAccountToken({
      idHash: hash, id: randomUUID(), kind: 'reset', accountId: login.account.id, memberId: login.member?.id ?? null,
      email: login.member?.email ?? login.account.email, role: null, createdAt: new Date(now).toISOString(), expiresAt, usedAt: null,
    });
    return { url: this.link('reset', value), expiresAt };
  }

  private link(page: 'accept' | 'reset', token: string): string {
    return `${this.opts.publicBase().replace(/\/+$/, '')}/dashboard/#/${page}?token=${token}`;
  }

  private async memberOf(accountId: string, memberId: string): Promise<Member> {
    const m = await this.store.members.getMember(memberId);
    if (!m || m.accountId !== accountId) throw new NotFoundError('member');
    return m;
  }

  /** An email is one login: refused (409) when an account or a member already has it. */
  private async refuseTaken(email: string): Promise<void> {
    if (await this.taken(email)) throw new StoreConflictError(`a login with email ${email} already exists`);
  }

  private async taken(email: string): Promise<boolean> {
    return Boolean((await this.store.accounts.getAccountByEmail(email)) || (await this.store.members.getMemberByEmail(email)));
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function checkEmail(email: string): string {
  const e = email?.trim();
  if (!e || !EMAIL.test(e) || e.length > 320) throw new ValidationError('email', 'must be an email address');
  return e;
}

function checkName(name: string): string {
  const n = name?.trim();
  if (!n) throw new ValidationError('name', 'must not be empty');
  return n;
}

function checkRole(role: string): void {
  if (!MEMBER_ROLES.includes(role as MemberRole)) throw new ValidationError('role', `one of ${MEMBER_ROLES.join(', ')}`);
}

async function checkPassword(password: string): Promise<void> {
  if (typeof password !== 'string' || password.length < MIN_PASSWORD) throw new ValidationError('password', `must be at least ${MIN_PASSWORD} characters`);
}
