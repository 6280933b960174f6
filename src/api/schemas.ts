import { KEY_TYPES, PERMISSIONS } from '../store/keys/api-key.ts';
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

export const SHARED_SCHEMAS = [ApiErrorSchema, PlanSchema, AccountSchema, AccountWithPlanSchema, KeySchema, CreatedKeySchema];

// Request bodies ----------------------------------------------------------------------------------------------

const name = { type: 'string', minLength: 1, maxLength: 200 } as const;
const list = (description: string) => ({ type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 1000, description }) as const;
const keyRestrictions = {
  ipAllowlist: list('IPv4/IPv6 addresses and CIDRs; empty: any'),
  originAllowlist: list('Browser origins (`https://app.example`); empty: any'),
  networkAllowlist: list('Network names or aliases; empty: any'),
  methodAllowlist: list('JSON-RPC method names; empty: any allowed method'),
  expiresAt: { type: ['string', 'null'], description: 'ISO 8601 date-time; null: never' },
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
