import { GatewayError } from '../../errors/gateway-error.ts';
import type { Stage } from '../call.ts';

/** Refusals of a local method by the gateway's own rules (filters, subscriptions), before any node work. */
const BY_RULES: ReadonlySet<string> = new Set(['FILTER_LIMIT', 'FILTER_NOT_FOUND', 'SUBSCRIPTION_LIMIT', 'SUBSCRIPTION_PLAN_LIMIT', 'NOTIFICATIONS_UNSUPPORTED']);

/** Stage `rules` (local methods only): a call refused this way is marked, and costs what an invalid item costs. */
export const refusedByRulesStage: Stage = (call, next) =>
  next(call).catch((err: unknown) => {
    if (err instanceof GatewayError && BY_RULES.has(err.entry)) call.refusedByRules = true;
    throw err;
  });
