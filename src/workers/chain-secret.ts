import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The secret the primary's chain server (chain-server.ts) asks of every call: made afresh at each start, known to the
 * primary and told to its workers over the cluster's IPC channel (never by environment or command line, which other
 * processes of the machine can read), so that nothing else on the machine that reaches the loopback port can write
 * to the embedded chains (anvil_setBalance, anvil_mine, ...) behind the tenants' backs.
 */
export function newChainSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The `authorization` header a worker sends with each call to the chain server. */
export function chainAuthorization(secret: string): string {
  return `Bearer ${secret}`;
}

/**
 * Whether an `authorization` header carries `secret`, in time independent of where they differ: both sides are
 * hashed first, so that timingSafeEqual compares equal lengths and the header's length tells nothing either.
 */
export function holdsChainSecret(header: string | undefined, secret: string): boolean {
  if (header === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(header), digest(chainAuthorization(secret)));
}
