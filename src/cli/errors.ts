import { NotFoundError, ValidationError } from '../accounts/errors.ts';
import { ConfigError } from '../config/config-error.ts';
import { StoreConflictError } from '../store/store-errors.ts';
import { driverCause, writeFaultError } from '../store/write-fault.ts';

/** The command line itself is wrong (unknown command or flag, missing argument): exit 2, with the usage. */
export class UsageError extends Error {
  constructor(message: string, readonly usage?: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command would work on a store other than the one evidently meant (exit 1, nothing done). */
export class StoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreRefusedError';
  }
}

/** Service fields whose flag is not simply the field in kebab case. */
const FLAG_OF: Record<string, string> = {
  planId: 'plan', ipAllowlist: 'ip', originAllowlist: 'origin', networkAllowlist: 'network', methodAllowlist: 'method', expiresAt: 'expires',
};

/** The flag a service field is given by: `ipAllowlist` → `--ip`, `cuPerSecond` → `--cu-per-second`. */
export function flagOf(field: string): string {
  return '--' + (FLAG_OF[field] ?? field.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()));
}

/**
 * What the user sees for an error, and the exit status: 2 when the command or a value is wrong (naming the
 * flag), 1 for everything else (not found, conflicts with what is stored, the store unreachable).
 */
export function describeError(err: unknown): { message: string; code: number } {
  if (err instanceof UsageError) return { message: `nodegate: ${err.message}${err.usage ? `\nusage:\n${err.usage}` : ''}`, code: 2 };
  if (err instanceof ConfigError) {
    const n = err.problems.length;
    return { message: `${err.message}\nconfiguration is invalid: ${n} problem${n === 1 ? '' : 's'}, nothing was started or changed`, code: 2 };
  }
  if (err instanceof ValidationError) return { message: `nodegate: ${flagOf(err.field)}: ${err.message.slice(err.field.length + 2)}`, code: 2 };
  if (err instanceof NotFoundError || err instanceof StoreConflictError || err instanceof StoreRefusedError) return { message: `nodegate: ${err.message}`, code: 1 };
  const fault = writeFaultError(err);
  if (fault) return { message: `nodegate: ${fault.message} (${driverCause(err)})`, code: 1 };
  return { message: `nodegate: ${err instanceof Error ? err.message : String(err)}`, code: 1 };
}
