import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JwtAlg, JwtPublicKey } from '../store/keys/api-key.ts';

/** A public key as uploaded: PEM (SPKI, `-----BEGIN PUBLIC KEY-----`) or a JWK, with the id tokens name it by. */
export interface JwtKeyInput {
  id: string;
  pem?: string;
  jwk?: Record<string, unknown>;
  /** Optional: the algorithm follows from the key (RSA: RS256, P-256: ES256, Ed25519: EdDSA); if given, it must agree. */
  alg?: string;
}

const ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** RSA below this is breakable by a determined attacker (NIST SP 800-131A): refused. */
const MIN_RSA_BITS = 2048;

/**
 * The key as kept (a public JWK and its algorithm), or why it is refused: the key's id, a private key (only the public
 * half is uploaded: a private one would put the signer's secret in the store), a key of another kind or curve.
 */
export function importJwtKey(input: JwtKeyInput): JwtPublicKey | string {
  if (typeof input?.id !== 'string' || !ID.test(input.id)) return 'each key needs an id of 1-64 letters, digits, ".", "_", ":" or "-" (a token names it in its kid)';
  if ((input.pem === undefined) === (input.jwk === undefined)) return `key ${input.id}: give its pem or its jwk (one of them)`;
  if (input.pem !== undefined && /PRIVATE KEY/.test(input.pem)) return `key ${input.id}: a private key; upload its public key only`;
  if (input.jwk !== undefined && 'd' in input.jwk) return `key ${input.id}: a private JWK (it has "d"); upload its public key only`;
  let key: KeyObject;
  try {
    key = input.pem !== undefined ? createPublicKey({ key: input.pem, format: 'pem' }) : createPublicKey({ key: input.jwk as never, format: 'jwk' });
  } catch {
    return `key ${input.id}: not a public key in PEM (SPKI) or JWK form`;
  }
  const alg = algOf(key);
  if (!alg) return `key ${input.id}: an RSA (2048 bits or more), P-256 or Ed25519 public key is needed, for RS256, ES256 or EdDSA`;
  if (input.alg !== undefined && input.alg !== alg) return `key ${input.id}: this key signs ${alg}, not ${input.alg}`;
  const { kty, crv, x, y, n, e } = key.export({ format: 'jwk' }) as Record<string, string>;
  const jwk = Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return { id: input.id, alg, jwk };
}

function algOf(key: KeyObject): JwtAlg | undefined {
  const d = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'rsa') return (d?.modulusLength ?? 0) >= MIN_RSA_BITS ? 'RS256' : undefined;
  if (key.asymmetricKeyType === 'ec') return d?.namedCurve === 'prime256v1' ? 'ES256' : undefined;
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  return undefined;
}
