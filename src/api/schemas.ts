import { JWT_ALGS, KEY_TYPES, MAX_JWT_KEYS, MAX_OVERLAP_MS, PERMISSIONS } from '../store/keys/api-key.ts';
import { PLAN_LIMITS, REQUIRED_PLAN_LIMITS, planLimitProperties } from '../config/plan-limits.ts';

/**
 * JSON schemas of the management API. The response schemas are the only serialization of records: what is not
 * listed here is not sent, which is how `hash` and `passwordHash` never leave the gateway. They are added as
 * shared schemas (`$id`), so the OpenAPI document shows them once under `components.schemas`.
 */
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
const strings = (description: string) => ({ type: 'array', items: { type: 'string' }, description }) as const;

export const ApiErrorSchema = {
  $id: 'ApiError',
  type: 'object',
  description: 'Every error of the management API',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: ['validation_failed', 'not_found', 'conflict', 'unauthorized', 'forbidden', 'bad_request', 'too_many_requests', 'internal'] },
        message: { type: 'string' },
        field: { type: 'string', description: 'The request field that is wrong (validation_failed only)' },
      },
    },
  },
} as const;

export const PlanSchema = {
  $id: 'Plan',
  type: 'object',
  required: ['id', 'name', ...PLAN_LIMITS.map((l) => l.name), 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', description: 'Slug, e.g. `free`' },
    name: { type: 'string' },
    // The limits come from their one definition (config/plan-limits.ts).
    ...planLimitProperties(),
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

const accountProperties = {
  id: { type: 'string' },
  name: { type: 'string' },
  email: { type: 'string' },
  status: { type: 'string', enum: ['active', 'suspended'] },
  role: { type: 'string', enum: ['operator', 'member'] },
  planId: { type: 'string' },
  createdAt: dateTime,
  updatedAt: dateTime,
} as const;
const accountRequired = ['id', 'name', 'email', 'status', 'role', 'planId', 'createdAt', 'updatedAt'] as const;

export const AccountSchema = { $id: 'Account', type: 'object', required: accountRequired, properties: accountProperties } as const;

export const AccountWithPlanSchema = {
  $id: 'AccountWithPlan',
  type: 'object',
  required: [...accountRequired, 'plan'],
  properties: { ...accountProperties, plan: { $ref: 'Plan#' } },
} as const;

const keyProperties = {
  id: { type: 'string' },
  accountId: { type: 'string' },
  name: { type: 'string' },
  type: { type: 'string', enum: KEY_TYPES },
  permissions: { type: 'array', items: { type: 'string', enum: PERMISSIONS } },
  prefix: { type: 'string', description: 'First characters of the value, to recognise the key; never enough to use it' },
  ipAllowlist: strings('IPv4/IPv6 addresses and CIDRs; empty: any'),
  originAllowlist: strings('Browser origins; empty: any'),
  networkAllowlist: strings('Network names; empty: any'),
  methodAllowlist: strings('JSON-RPC method names; empty: any allowed method'),
  methodDenylist: strings('JSON-RPC method names refused for this key'),
  contractAllowlist: strings('Contract addresses (lowercase) its calls may name: `to` of calls and transactions, `address` of log filters; empty: any'),
  userAgentAllowlist: strings('Parts of an allowed User-Agent (any one, case aside); empty: any'),
  logsMaxBlockRange: { type: ['integer', 'null'], description: "Blocks one eth_getLogs may span for this key; null: the network's bound" },
  jwtKeys: {
    type: 'array',
    description: 'Public keys of the JWTs the key requires (`Authorization: Bearer`); empty: none required',
    items: {
      type: 'object', required: ['id', 'alg', 'jwk'],
      properties: { id: { type: 'string', description: "The `kid` a token names" }, alg: { type: 'string', enum: JWT_ALGS }, jwk: { type: 'object', additionalProperties: { type: 'string' }, description: 'The public key' } },
    },
  },
  jwtAudiences: strings('The `aud` a JWT must carry (one of them); empty: not checked'),
  previousPrefix: { type: ['string', 'null'], description: 'The prefix of the value before the last rotation, while it still works' },
  previousUntil: { ...nullableDateTime, description: 'Until when the value before the last rotation works' },
  expiresAt: nullableDateTime,
  createdBy: { type: ['string', 'null'], description: "The id of the member who made the key (it is revoked when they are removed); null: the account's own login, the operator or the CLI" },
  createdAt: dateTime,
  lastUsedAt: nullableDateTime,
  revokedAt: nullableDateTime,
} as const;
const keyRequired = Object.keys(keyProperties) as (keyof typeof keyProperties)[];

export const KeySchema = { $id: 'Key', type: 'object', required: keyRequired, properties: keyProperties } as const;

export const CreatedKeySchema = {
  $id: 'CreatedKey',
  type: 'object',
  description: 'A new key with its value: the only time the value is shown',
  required: [...keyRequired, 'value'],
  properties: { ...keyProperties, value: { type: 'string', description: 'The key (`ngk_…`), shown this once; only its SHA-256 is kept' } },
} as const;

export const RevokedKeySchema = {
  $id: 'RevokedKey',
  type: 'object',
  description: 'What revoking by a reference did',
  required: ['outcome', 'key'],
  properties: {
    outcome: { type: 'string', enum: ['revoked', 'already_revoked', 'overlap_ended'], description: '`overlap_ended`: the reference was a rotated-out value (or its prefix), which stopped; the key and its value keep working' },
    key: { $ref: 'Key#' },
  },
} as const;

export const SHARED_SCHEMAS = [ApiErrorSchema, PlanSchema, AccountSchema, AccountWithPlanSchema, KeySchema, CreatedKeySchema, RevokedKeySchema];

// Request bodies ----------------------------------------------------------------------------------------------

const name = { type: 'string', minLength: 1, maxLength: 200 } as const;
const list = (description: string) => ({ type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 1000, description }) as const;
const keyRestrictions = {
  ipAllowlist: list('IPv4/IPv6 addresses and CIDRs; empty: any'),
  originAllowlist: list('Browser origins (`https://app.example`); empty: any'),
  networkAllowlist: list('Network names or aliases; empty: any'),
  methodAllowlist: list('JSON-RPC method names; empty: any allowed method'),
  methodDenylist: list('JSON-RPC method names refused for this key'),
  contractAllowlist: list('Contract addresses (0x and 40 hex digits) its calls may name; empty: any'),
  userAgentAllowlist: list('Parts of an allowed User-Agent (any one, case aside); empty: any'),
  logsMaxBlockRange: { type: ['integer', 'null'], minimum: 1, description: "Blocks one eth_getLogs may span for this key; null: the network's bound" },
  jwtKeys: {
    type: 'array',
    maxItems: MAX_JWT_KEYS,
    description: 'Public keys (RSA 2048+ for RS256, P-256 for ES256, Ed25519 for EdDSA) the JWTs it then requires are signed with; replaces the list; empty: no JWT required',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 64, description: 'The `kid` a token names it by' },
        pem: { type: 'string', maxLength: 8192, description: 'SPKI PEM (`-----BEGIN PUBLIC KEY-----`)' },
        jwk: { type: 'object', description: 'A public JWK' },
        alg: { type: 'string', enum: JWT_ALGS, description: 'Optional: it follows from the key' },
      },
    },
  },
  jwtAudiences: { ...list('The `aud` a JWT must carry (one of them); empty: not checked'), maxItems: 10 },
  expiresAt: { type: ['string', 'null'], description: 'ISO 8601 date-time; null: never' },
} as const;

export const rotateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    overlapSeconds: { type: 'integer', minimum: 0, maximum: MAX_OVERLAP_MS / 1000, default: 0, description: 'How long the old value keeps working (at most a day); 0: it stops now' },
  },
} as const;

export const revokeByReferenceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: {
    key: { type: 'string', minLength: 1, maxLength: 200, description: "A key's id, its value, or the prefix shown for it (`ngk_Ab12…`)" },
  },
} as const;

export const newKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name,
    type: { type: 'string', enum: KEY_TYPES, default: 'Standard' },
    permissions: { type: 'array', items: { type: 'string', enum: PERMISSIONS }, description: 'Restricted keys only: a non-empty subset' },
    ...keyRestrictions,
  },
} as const;

export const keyPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'Type and permissions are fixed at creation',
  properties: { name, ...keyRestrictions },
} as const;

/** A new plan: the limits with a default may be left out (config/plan-limits.ts). */
export const newPlanBody = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', ...REQUIRED_PLAN_LIMITS],
  properties: {
    id: { type: 'string', description: 'Slug: lowercase letters, digits and dashes' },
    name,
    ...planLimitProperties(true),
  },
};

export const planPatchBody = { type: 'object', additionalProperties: false, minProperties: 1, properties: { name, ...planLimitProperties() } };

const accountFields = {
  name,
  email: { type: 'string', minLength: 3, maxLength: 320 },
  password: { type: 'string', minLength: 12, maxLength: 1024, description: 'At least 12 characters; absent: the account cannot log in' },
  role: { type: 'string', enum: ['operator', 'member'] },
  planId: { type: 'string', minLength: 1 },
} as const;

export const newAccountBody = { type: 'object', additionalProperties: false, required: ['name', 'email'], properties: accountFields } as const;

export const accountPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'Status changes through suspend and reactivate',
  properties: accountFields,
} as const;

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 100 } } } as const;

// Responses ---------------------------------------------------------------------------------------------------

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed body, or a field is missing or invalid (`field` names it)',
  401: 'Missing or wrong credentials (`WWW-Authenticate` says which)',
  403: 'The credentials are valid but not allowed here',
  404: 'No such record, or it belongs to another account',
  409: 'Conflicts with the stored state (duplicate, in use)',
  429: 'Too many failed authentications from this address (`Retry-After`)',
};

/** The error responses a route can give, for its schema (and so for the OpenAPI document). */
export function errorResponses(...statuses: number[]) {
  if (statuses.includes(401)) statuses = [...statuses, 429];
  return Object.fromEntries(statuses.map((s) => [s, { description: ERROR_DESCRIPTIONS[s], $ref: 'ApiError#' }]));
}

export const ref = (id: string, description: string) => ({ description, $ref: `${id}#` });
/** `?limit=&cursor=` of a paged list (query strings are strings: `limit` is checked as digits, then read). */
export const pageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^(?:[1-9][0-9]{0,2}|1000)$', description: 'items per page, 1-1000 (default 100)' },
    cursor: { type: 'string', maxLength: 200, description: 'nextCursor of the page before' },
  },
} as const;

/** A page of a list: its items and the cursor of the next page (null after the last). */
export const pageOf = (prop: string, id: string, description: string) => ({
  description,
  type: 'object',
  required: [prop, 'nextCursor'],
  properties: { [prop]: { type: 'array', items: { $ref: `${id}#` } }, nextCursor: { type: ['string', 'null'] } },
});

export const listOf = (prop: string, id: string, description: string) => ({
  description,
  type: 'object',
  required: [prop],
  properties: { [prop]: { type: 'array', items: { $ref: `${id}#` } } },
});
