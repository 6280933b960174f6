import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `Nodegate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">` (docs/decisions.md §10), as Stripe signs: the time
 * is inside the signature, so a receiver can refuse an old delivery replayed, and the body is signed byte for byte.
 */
export function signature(secret: string, body: string | Uint8Array, unixSeconds: number): string {
  // The time and the body are hashed one after the other: "t.body" as one string would copy a body of megabytes.
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex')}`;
}

/** The receiver's side, as docs/webhooks.md shows it: the header matches the body and is at most `toleranceS` old. */
export function verifySignature(secret: string, body: string, header: string, nowSeconds: number, toleranceS = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceS || typeof parts.v1 !== 'string') return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  const got = Buffer.from(parts.v1);
  return got.length === expected.length && timingSafeEqual(got, expected);
}
