// @ts-check
// The shapes the dashboard reads from the API, as JSDoc types. Where the server has the type, it is imported from
// the server's own module (src/store/accounts/account.ts, src/store/keys/api-key.ts, src/store/plans/plan.ts, src/store/team/member.ts, src/store/webhooks/webhook-store.ts, src/dashboard/facts.ts); the
// shapes of the team, alert and delivery routes that other modules are adding are written from the shared contract
// (/api/v1, docs/api.md).

/** @typedef {import('../../facts.ts').DashboardFacts} Facts */
/** @typedef {import('../../../store/plans/plan.ts').Plan} Plan */
/** @typedef {import('../../../store/keys/api-key.ts').KeyType} KeyType */
/** @typedef {import('../../../store/keys/api-key.ts').Permission} Permission */
/** @typedef {Omit<import('../../../store/accounts/account.ts').Account, 'passwordHash'>} Account */
/** @typedef {Omit<import('../../../store/keys/api-key.ts').ApiKey, 'hash' | 'previousHash'>} ApiKey */
/** @typedef {ApiKey & { value: string }} CreatedKey */
/** @typedef {Omit<import('../../../store/webhooks/webhook-store.ts').Webhook, 'secret'>} Webhook */
/** @typedef {'owner' | 'developer' | 'viewer'} MemberRole */

/**
 * @typedef {object} Session
 * @property {{ id: string, name: string, email: string, role: 'operator' | 'member', planId: string }} account
 * @property {{ id: string, email: string, name: string, role: MemberRole } | null} [member]
 * @property {MemberRole} [role] absent before the members module is merged: then the account's own login, an owner
 * @property {string} csrfToken
 * @property {string} expiresAt
 */

/**
 * @typedef {object} Endpoint
 * @property {string} name
 * @property {number} chainId
 * @property {string} kind
 * @property {string[]} aliases
 * @property {string} url the HTTP endpoint with a trailing slash: append the key
 */

/**
 * @typedef {object} Tally
 * @property {number} requests
 * @property {number} computeUnits
 * @property {number} errors
 */

/** @typedef {Tally & { p50Ms?: number | null, p99Ms?: number | null }} Timed a breakdown's tally with its median and p99 latency (bucket bounds, ms) */

/**
 * @typedef {object} UsageReport
 * @property {string} from
 * @property {string} to
 * @property {'minute' | 'hour' | 'day'} bucket
 * @property {Tally} totals
 * @property {Array<Tally & { t: string, latencyMsAvg: number }>} series
 * @property {Array<Timed & { method: string }>} byMethod
 * @property {Array<Timed & { keyId: string }>} byKey
 * @property {Array<Timed & { network: string }>} byNetwork
 * @property {Array<Timed & { code: number }>} byCode
 * @property {Array<Timed & { accountId: string }>} [byAccount] absent from older gateways
 * @property {{ bucketsMs: number[], counts: number[], avgMs: number, p50Ms?: number | null, p99Ms?: number | null }} latency
 * @property {{ month: string, used: number, limit: number, plan: string }} [quota]
 */

/**
 * @typedef {object} Delivery one event of a webhook with its delivery (contract shape; older servers: id, status, lastStatus, lastError)
 * @property {string} [eventId]
 * @property {string} [id]
 * @property {string} type
 * @property {string} createdAt
 * @property {string | null} [deliveredAt]
 * @property {'pending' | 'delivered'} [status]
 * @property {number} attempts
 * @property {string | null} [nextAttemptAt]
 * @property {unknown} [payload]
 * @property {{ at: string, status: number | null, durationMs: number | null, error: string | null, responseBody: string | null } | null} [lastAttempt]
 * @property {number | null} [lastStatus]
 * @property {string | null} [lastError]
 */

/**
 * @typedef {object} Member
 * @property {string} id
 * @property {string} email
 * @property {string} name
 * @property {MemberRole} role
 * @property {string} createdAt
 */

/**
 * @typedef {object} Invitation
 * @property {string} id
 * @property {string} email
 * @property {MemberRole} role
 * @property {string} expiresAt
 * @property {string} createdAt
 */

/**
 * @typedef {object} AlertSettings
 * @property {number[]} quotaPercents
 * @property {{ percent: number, minutes: number, minRequests: number } | null} errorRate
 * @property {boolean} email
 */

/**
 * @typedef {object} Upstream
 * @property {string} upstream
 * @property {string} role
 * @property {string} state
 * @property {number | null} [chainId]
 * @property {number | string | null} [head]
 * @property {number | null} [lag]
 * @property {string} breaker
 * @property {string | null} [error]
 */

export {};
