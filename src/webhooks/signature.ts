import { createHmac } from 'node:crypto';

/**
 * `Nodegate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">` (docs/decisions.md §10), as Stripe signs: the time
 * is inside the signature, so a receiver can refuse an old delivery replayed, and the body is signed byte for byte.
 */
export function signature(secret: string, body: string | Uint8Array, unixSeconds: number): string {
  // The time and the body are hashed one after the other: "t.body" as one string would copy a body of megabytes.
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex')}`;
}
