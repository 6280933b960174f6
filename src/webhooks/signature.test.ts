import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { signature } from './signature.ts';

test('a body signed as the bytes sent has the signature of the same body as text', () => {
  const body = JSON.stringify({ id: 'evt_1', event: { logs: ['é', '0x00'] } });
  const header = signature('whsec_x', Buffer.from(body), 1_700_000_000);
  assert.equal(header, signature('whsec_x', body, 1_700_000_000));
  // What a receiver computes (docs/webhooks.md): the HMAC of "t.body" as one string.
  assert.equal(header, `t=1700000000,v1=${createHmac('sha256', 'whsec_x').update(`1700000000.${body}`).digest('hex')}`);
});
