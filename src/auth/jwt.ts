import { createHash } from 'node:crypto';
import { decodeProtectedHeader, errors, importJWK, jwtVerify, type JWTVerifyOptions } from 'jose';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../errors/gateway-error.ts';
import type { JwtPublicKey } from '../store/keys/api-key.ts';

/** How far a token's `exp` and `nbf` may be off the gateway's clock (the signer's clock is not ours). */
export const CLOCK_SKEW_S = 60;
/** Tokens whose verification is remembered, for all keys together: the hot path verifies a token once. */
const REMEMBERED = 10_000;
/** How long a refused token is remembered: its refusal does not change, but the key's public keys may. */
const REFUSAL_MS = 600_000;
/** Longer is no JWT a client sends (a few hundred bytes): not hashed, not parsed. */
const MAX_TOKEN = 8192;

/** The JWT a key requires, made once when the key enters the key cache (key-resolver.ts `prepare`). */
export interface KeyJwt {
  keys: readonly { id: string; alg: string; key: () => Promise<CryptoKey | Uint8Array> }[];
  options: JWTVerifyOptions;
}

/** The key's JWT rule, or undefined when it has no public keys (it requires none, and pays nothing). */
export function keyJwt(keys: readonly JwtPublicKey[], audiences: readonly string[]): KeyJwt | undefined {
  if (keys.length === 0) return undefined;
  return {
    // Imported once per key resolution, when first needed; a key that failed to import refuses its tokens.
    keys: keys.map((k) => ({ id: k.id, alg: k.alg, key: once(() => importJWK(k.jwk, k.alg)) })),
    options: {
      algorithms: [...new Set(keys.map((k) => k.alg))],
      audience: audiences.length ? [...audiences] : undefined,
      clockTolerance: CLOCK_SKEW_S,
      requiredClaims: ['exp'],
    },
  };
}

/** A verification remembered: for which rule (the key's resolution), until when, and the refusal if it failed. */
interface Seen { jwt: KeyJwt; until: number; refusal: GatewayError | undefined }

/**
 * Checks the `Authorization: Bearer` JWT of a key that requires one (docs/security.md, "Keys"). Each token is
 * verified once: the outcome is remembered by the token's SHA-256 (the token itself is not kept) until its `exp`
 * (plus the clock skew), in a bounded LRU, for the key's rule as resolved (a change to the key's public keys or
 * audiences makes a new rule, and its tokens are verified again). Answers at once when remembered, else a promise.
 */
export class JwtChecks {
  private readonly seen = new LRUCache<string, Seen>({ max: REMEMBERED });
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly now: () => number = Date.now) {}

  check(jwt: KeyJwt, authorization: string | undefined): void | Promise<void> {
    const token = bearer(authorization);
    if (token === undefined) throw new GatewayError('JWT_MISSING');
    if (token.length > MAX_TOKEN) throw new GatewayError('JWT_INVALID', { detail: 'not a JWT' });
    const id = createHash('sha256').update(token).digest('base64');
    const now = this.now();
    const seen = this.seen.get(id);
    if (seen && seen.jwt === jwt && now < seen.until) {
      if (seen.refusal) throw seen.refusal;
      return;
    }
    // Requests arriving together with a new token share its one verification.
    let p = this.pending.get(id);
    if (!p) {
      p = verify(jwt, token, now).then(
        (exp) => { this.seen.set(id, { jwt, until: exp * 1000 + CLOCK_SKEW_S * 1000, refusal: undefined }); },
        (err: unknown) => {
          const refusal = refusalOf(err);
          this.seen.set(id, { jwt, until: now + REFUSAL_MS, refusal });
          throw refusal;
        },
      ).finally(() => this.pending.delete(id));
      this.pending.set(id, p);
    }
    return p;
  }
}

/** The token of `Authorization: Bearer <token>` (the scheme in any case, RFC 7235), or undefined. */
function bearer(h: string | undefined): string | undefined {
  if (h === undefined || h.length < 8 || h.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  const t = h.slice(7).trim();
  return t || undefined;
}

/**
 * Verifies `token` against the key's public keys: the one its `kid` names, else each of its algorithm (at most
 * MAX_JWT_KEYS). Answers its `exp`, in seconds.
 */
async function verify(jwt: KeyJwt, token: string, now: number): Promise<number> {
  const header = decodeProtectedHeader(token);
  const candidates = jwt.keys.filter((k) => (header.kid === undefined || k.id === header.kid) && k.alg === header.alg);
  if (candidates.length === 0) throw new GatewayError('JWT_INVALID', { detail: header.kid === undefined ? `no public key of the key signs ${String(header.alg)}` : `no public key ${String(header.kid).slice(0, 64)} for ${String(header.alg)}` });
  let failed: unknown;
  for (const c of candidates) {
    try {
      const { payload } = await jwtVerify(token, await c.key(), { ...jwt.options, currentDate: new Date(now) });
      return payload.exp!;
    } catch (err) {
      if (!(err instanceof errors.JWSSignatureVerificationFailed)) throw err;
      failed = err;
    }
  }
  throw failed;
}

/** jose's error as the catalogue's refusal: missing, expired, wrong audience, or not valid (with what). */
function refusalOf(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof errors.JWTExpired) return new GatewayError('JWT_EXPIRED');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return new GatewayError('JWT_AUDIENCE');
    if (err.claim === 'exp') return new GatewayError('JWT_INVALID', { detail: 'it has no exp' });
    if (err.claim === 'nbf') return new GatewayError('JWT_INVALID', { detail: 'not valid yet (nbf)' });
    return new GatewayError('JWT_INVALID', { detail: `its ${err.claim} claim` });
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return new GatewayError('JWT_INVALID', { detail: 'bad signature' });
  if (err instanceof errors.JOSEAlgNotAllowed) return new GatewayError('JWT_INVALID', { detail: 'an algorithm the key does not take' });
  return new GatewayError('JWT_INVALID', { detail: 'not a JWT' });
}

/** `make`'s promise, made on the first call and answered to every call (a key is imported once, when first used). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
}
