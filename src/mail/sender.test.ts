import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sqliteStores } from '../store/open-store.ts';
import type { Stores } from '../store/stores.ts';
import { MAX_MAIL_ATTEMPTS, MailSender, mailBackoffMs, type MailTransport } from './sender.ts';
import { MailOutbox } from './outbox.ts';

const log = pino({ level: 'silent' });

/** A transport that fails the first `failures` sends, and records what it sent. */
function transport(failures: number): MailTransport & { sent: { to: string; text: string }[] } {
  const sent: { to: string; text: string }[] = [];
  let left = failures;
  return {
    sent,
    async send(m) {
      if (left-- > 0) throw new Error('connection refused');
      sent.push({ to: m.to, text: m.text });
    },
    close() {},
  };
}

/** Sends what is due, once, with a sender of its own (as another instance would). */
async function drainOnce(store: Stores, t: MailTransport): Promise<void> {
  const sender = new MailSender(store.mail, t, { from: 'Nodegate <n@localhost>', pollMs: 600_000, timeoutMs: 1000 }, log);
  await sender.flush();
  await sender.close();
}

test('a message is sent once, its body emptied; without SMTP nothing is written', async () => {
  const store = sqliteStores(':memory:');
  try {
    await new MailOutbox(store.mail, false, log).enqueue({ to: 'a@example.com', subject: 's', text: 'token=abc' });
    assert.deepEqual(await store.mail.listMail(10), [], 'not configured: nothing in the outbox');
    await new MailOutbox(store.mail, true, log).enqueue({ to: 'a@example.com', subject: 's', text: 'token=abc' });
    const t = transport(0);
    await drainOnce(store, t);
    await drainOnce(store, t);
    assert.deepEqual(t.sent, [{ to: 'a@example.com', text: 'token=abc' }], 'sent exactly once');
    const [m] = await store.mail.listMail(10);
    assert.ok(m.sentAt);
    assert.equal(m.body, '');
  } finally {
    await store.close();
  }
});

test('a failed send waits its back-off before the next try; after the last attempt it is given up and emptied', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-mail-'));
  const store = sqliteStores(join(dir, 'n.db'));
  const db = new Database(join(dir, 'n.db'));
  try {
    await new MailOutbox(store.mail, true, log).enqueue({ to: 'b@example.com', subject: 's', text: 'token=def' });
    const t = transport(Infinity);
    await drainOnce(store, t);
    let [m] = await store.mail.listMail(10);
    assert.equal(m.attempts, 1);
    assert.equal(m.lastError, 'connection refused');
    assert.equal(Date.parse(m.nextAttemptAt) - Date.parse(m.createdAt) >= mailBackoffMs(1) - 1000, true, 'not due again at once');
    await drainOnce(store, t);
    assert.equal((await store.mail.listMail(10))[0].attempts, 1, 'not tried before it is due');
    // The attempts left, each made due at once (time passing, without waiting for it).
    for (let i = 1; i < MAX_MAIL_ATTEMPTS; i++) {
      db.prepare('UPDATE mail_outbox SET next_attempt_at = ?').run(new Date(0).toISOString());
      await drainOnce(store, t);
    }
    [m] = await store.mail.listMail(10);
    assert.equal(m.attempts, MAX_MAIL_ATTEMPTS);
    assert.equal(m.body, '', 'given up: the link leaves the store');
    assert.equal(m.sentAt, null);
    assert.deepEqual(mailBackoffMs(1), 10_000);
    assert.deepEqual(mailBackoffMs(30), 3_600_000);
  } finally {
    db.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
