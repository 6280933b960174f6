import { StoreConflictError } from './store.ts';

/** A broken uniqueness or reference rule, as each store's driver reports it, reduced to what the message needs. */
export type Violation = { kind: 'unique'; column: string } | { kind: 'reference' };

/**
 * The database's own constraints are the guard (no read-then-write race, on either store); this turns their
 * violations into StoreConflictError with a message in the operation's terms, and rethrows anything else.
 */
export function rethrowConflict(err: unknown, violation: Violation | undefined, message: (v: Violation) => string): never {
  if (violation) throw new StoreConflictError(message(violation));
  throw err;
}

export const planConflict = (id: string) => (v: Violation) =>
  v.kind === 'unique' ? `plan "${id}" already exists` : `plan "${id}" is in use by an account`;

export const accountConflict = (a: { id?: string; email?: string; planId?: string }) => (v: Violation) => {
  if (v.kind === 'reference') return `unknown plan "${a.planId}"`;
  return v.column === 'id' ? `account "${a.id}" already exists` : `an account with email ${a.email} already exists`;
};

export const keyConflict = (k: { id: string; accountId: string }) => (v: Violation) =>
  v.kind === 'reference' ? `unknown account "${k.accountId}"` : `a key with this ${v.column === 'id' ? `id (${k.id})` : 'value'} already exists`;

export const memberConflict = (m: { id: string; email: string; accountId: string }) => (v: Violation) => {
  if (v.kind === 'reference') return `unknown account "${m.accountId}"`;
  return v.column === 'id' ? `member "${m.id}" already exists` : `a login with email ${m.email} already exists`;
};
