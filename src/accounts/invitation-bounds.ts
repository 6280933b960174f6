import type { EventBudget, EventBudgets } from '../shared-state/event-budget/event-budget.ts';
import { eventBudget } from '../shared-state/event-budget/event-budgets.ts';

/**
 * Invitation mails to one address: 3, then one every 8 hours (3 a day), whoever sends them. An invitation is mail
 * to someone who did not ask for it, so a gateway must not become a way to flood a stranger's inbox; past the
 * budget the invitation is still made and answered (its link is in the answer), and quietly not mailed: the answer
 * is the same either way, and does not tell an inviter that someone else invited that address too.
 */
export const MAILS_PER_RECIPIENT = { perSecond: 3 / 86_400, burst: 3 };

/**
 * Invitations made by one account: 20, then one every 3 minutes (20 an hour). Past it the account is refused (429):
 * it is the caller's own budget, so saying so tells nothing about anyone else.
 */
export const INVITATIONS_PER_ACCOUNT = { perSecond: 20 / 3_600, burst: 20 };

/** The two budgets, kept across processes when the shared state is (Redis, the workers' primary). */
export interface InvitationBounds {
  perRecipient: EventBudget;
  perAccount: EventBudget;
}

export function invitationBounds(shared?: EventBudgets, now?: () => number): InvitationBounds {
  return {
    perRecipient: eventBudget('invite-mail', MAILS_PER_RECIPIENT, shared, now),
    perAccount: eventBudget('invitations', INVITATIONS_PER_ACCOUNT, shared, now),
  };
}
