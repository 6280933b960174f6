import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { test } from 'node:test';
import { SignJWT, importPKCS8 } from 'jose';
import { GatewayError } from '../errors/gateway-error.ts';
import { importJwtKey } from './jwt-public-key.ts';
import { JwtChecks, keyJwt } from './jwt.ts';
import type { JwtPublicKey } from '../store/keys/api-key.ts';

const T0 = 1_800_000_000_000;

/** A signer of each kind: its public key as the key keeps it, and a way to sign tokens with it. */
function signer(kind: 'ec' | 'rsa' | 'ed25519', id: string, alg: string) {
  const opts = kind === 'ec' ? { namedCurve: 'P-256' } : kind === 'rsa' ? { modulusLength: 2048 } : {};
  const { publicKey, privateKey } = generateKeyPairSync(kind as 'ec', opts as { namedCurve: string }) as unknown as { publicKey: KeyObject; privateKey: KeyObject };
  const pub = importJwtKey({ id, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() }) as JwtPublicKey;
  const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const sign = async (claims: Record<string, unknown>, header: Record<string, unknown> = { kid: id }) =>
    new SignJWT(claims).setProtectedHeader({ alg, ...header }).sign(await importPKCS8(pkcs8, alg));
  return { pub, sign };
}

/** What a check answers: `accepted`, or the refusal's status, reason and detail (thrown at once or rejected). */
const refusal = async (check: () => unknown) => {
  try {
    await check();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return `${err.status} ${String(err.data.reason)}${err.data.detail ? `: ${String(err.data.detail)}` : ''}`;
  }
  return 'accepted';
};

test('a token signed by one of the key\'s public keys passes, for each algorithm, with or without kid', async () => {
  const signers = [signer('ec', 'p256', 'ES256'), signer('rsa', 'rsa', 'RS256'), signer('ed25519', 'ed', 'EdDSA')];
  assert.deepEqual(signers.map((s) => s.pub.alg), ['ES256', 'RS256', 'EdDSA']);
  const jwt = keyJwt(signers.map((s) => s.pub), [])!;
  const checks = new JwtChecks(() => T0);
  const exp = T0 / 1000 + 3600;
  for (const s of signers) {
    assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await s.sign({ exp })}`)), 'accepted');
    assert.equal(await refusal(async () => checks.check(jwt, `bearer ${await s.sign({ exp, sub: 'no kid' }, {})}`)), 'accepted');
  }
});

test('refusals say why: missing, expired, bad signature, wrong audience, no exp, another key\'s', async () => {
  const mine = signer('ec', 'mine', 'ES256');
  const other = signer('ec', 'mine', 'ES256');
  const jwt = keyJwt([mine.pub], ['https://rpc.example'])!;
  const checks = new JwtChecks(() => T0);
  const exp = T0 / 1000 + 600;
  const aud = 'https://rpc.example';
  assert.equal(await refusal(async () => checks.check(jwt, undefined)), '401 jwt_missing');
  assert.equal(await refusal(async () => checks.check(jwt, 'Basic abc')), '401 jwt_missing');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await mine.sign({ exp, aud })}`)), 'accepted');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await mine.sign({ exp: T0 / 1000 - 3600, aud })}`)), '401 jwt_expired');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await other.sign({ exp, aud })}`)), '401 jwt_invalid: bad signature');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await mine.sign({ exp, aud: 'https://elsewhere' })}`)), '401 jwt_audience');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await mine.sign({ exp })}`)), '401 jwt_audience');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await mine.sign({ aud })}`)), '401 jwt_invalid: it has no exp');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await mine.sign({ exp, aud }, { kid: 'unknown' })}`)), '401 jwt_invalid: no public key unknown for ES256');
  assert.equal(await refusal(async () => checks.check(jwt, 'Bearer not.a.jwt')), '401 jwt_invalid: not a JWT');
});

test('the clock may be off by 60 s, not more', async () => {
  const s = signer('ed25519', 'ed', 'EdDSA');
  const jwt = keyJwt([s.pub], [])!;
  const checks = new JwtChecks(() => T0);
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await s.sign({ exp: T0 / 1000 - 59 })}`)), 'accepted');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await s.sign({ exp: T0 / 1000 - 61 })}`)), '401 jwt_expired');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await s.sign({ exp: T0 / 1000 + 600, nbf: T0 / 1000 + 59 })}`)), 'accepted');
  assert.equal(await refusal(async () => checks.check(jwt, `Bearer ${await s.sign({ exp: T0 / 1000 + 600, nbf: T0 / 1000 + 61 })}`)), '401 jwt_invalid: not valid yet (nbf)');
});

test('a token is verified once: answered at once afterwards, until its exp; a changed key verifies it again', async () => {
  const s = signer('ec', 'k', 'ES256');
  let now = T0;
  const checks = new JwtChecks(() => now);
  const jwt = keyJwt([s.pub], [])!;
  const token = `Bearer ${await s.sign({ exp: T0 / 1000 + 10 })}`;
  const first = checks.check(jwt, token);
  assert.ok(first instanceof Promise, 'a new token is verified');
  await first;
  assert.equal(checks.check(jwt, token), undefined, 'then decided at once, no promise');
  now = T0 + 10_000 + 60_000;
  assert.ok(checks.check(jwt, token) instanceof Promise, 'past exp and the skew, verified again');
  assert.equal(await refusal(async () => checks.check(jwt, token)), '401 jwt_expired');
  // The same token for another resolution of the key (its public keys changed): verified against it.
  now = T0;
  const rotated = keyJwt([signer('ec', 'k', 'ES256').pub], [])!;
  assert.equal(await refusal(async () => checks.check(rotated, token)), '401 jwt_invalid: bad signature');
  // A refused token is remembered too: the same bad token again costs no verification.
  assert.throws(() => checks.check(rotated, token), /not valid/);
});

test('public keys are uploaded as PEM or JWK, never private, of the three kinds only', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  assert.deepEqual(importJwtKey({ id: 'a', jwk }), { id: 'a', alg: 'ES256', jwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y } });
  assert.match(importJwtKey({ id: 'a', pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }) as string, /private key/);
  assert.match(importJwtKey({ id: 'a', jwk: privateKey.export({ format: 'jwk' }) as Record<string, unknown> }) as string, /private JWK/);
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
  assert.match(importJwtKey({ id: 'a', pem: p384 }) as string, /P-256/);
  const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
  assert.match(importJwtKey({ id: 'a', pem: rsa1024 }) as string, /2048 bits/);
  assert.match(importJwtKey({ id: 'a', pem: 'nope' }) as string, /not a public key/);
  assert.match(importJwtKey({ id: 'a b', jwk }) as string, /id of/);
  assert.match(importJwtKey({ id: 'a', jwk, alg: 'RS256' }) as string, /signs ES256, not RS256/);
});
