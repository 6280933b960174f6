import type { Metrics } from '../analytics/metrics.ts';
import type { RefusalLog } from '../analytics/refusal-log.ts';
import type { UsageRecorder } from '../analytics/usage-recorder.ts';
import type { RequestLog } from '../analytics/request-log.ts';
import type { KeyResolver } from '../auth/key-resolver.ts';
import type { UnknownKeyGuard } from '../limits/unknown-key-guard.ts';
import type { SharedState } from '../shared-state/open-shared-state.ts';
import type { Networks } from '../networks/networks.ts';
import type { Config } from '../config/schema.ts';
import type { Limits } from '../limits/limits.ts';
import type { ResponseBudget } from './response-budget.ts';

/** What the request stages of the JSON-RPC endpoint use, built once at start-up (rpc/endpoint.ts). */
export interface EndpointDeps {
  config: Readonly<Config>;
  networks: Networks;
  keys: KeyResolver;
  /** Absent when `limits.enabled` is false: the limit stages then cost nothing. */
  limits: Limits | undefined;
  usage?: UsageRecorder;
  /** The request explorer's recorder; absent when `explorer.enabled` is false (no work per call). */
  requests?: RequestLog;
  metrics?: Metrics;
  refusals?: RefusalLog;
  guard: UnknownKeyGuard;
  /** The shared state's budgets: the unknown-key guard counts failures across processes when it is shared. */
  shared?: Pick<SharedState, 'eventBudgets'>;
  responses: ResponseBudget;
  /** What reading and framing a body of `bytes` costs: the least any request costs. */
  framingCost: (bytes: number) => number;
}
