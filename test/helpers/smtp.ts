import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

export interface TestSmtp {
  port: number;
  /** Every message accepted so far, decoded (quoted-printable, base64), in the order received. */
  mails: ReceivedMail[];
  /** The gateway's `mail` configuration that sends to this server. */
  config: { smtp: { host: string; port: number; secure: boolean; user: string; password: string }; from: string };
  close(): Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1 and a free port, started by a test: what the gateway's outbox sends arrives here
 * over SMTP and is decoded with mailparser, so a test reads the message a user would (a reset link, an alert).
 * Plain SMTP without authentication, as a local relay is.
 */
export async function startTestSmtp(): Promise<TestSmtp> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then((m) => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), subject: m.subject ?? '', text: m.text ?? '' });
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port, mails,
    config: { smtp: { host: '127.0.0.1', port, secure: false, user: '', password: '' }, from: 'Nodegate <nodegate@localhost>' },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
