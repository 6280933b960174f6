import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chainAuthorization, holdsChainSecret, newChainSecret } from './chain-secret.ts';

test('the chain server takes its own start\'s secret only: not a missing, wrong, shorter or earlier one', () => {
  const secret = newChainSecret();
  assert.equal(holdsChainSecret(chainAuthorization(secret), secret), true);
  assert.equal(holdsChainSecret(undefined, secret), false);
  assert.equal(holdsChainSecret('', secret), false);
  assert.equal(holdsChainSecret(chainAuthorization(secret.slice(1)), secret), false);
  assert.equal(holdsChainSecret(secret, secret), false, 'the bare secret, without the scheme');
  assert.equal(holdsChainSecret(chainAuthorization(newChainSecret()), secret), false, 'another start\'s');
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/, '32 random bytes');
});
