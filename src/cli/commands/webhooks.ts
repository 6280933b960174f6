import { JSON_FLAG, type Subcommand } from '../command.ts';
import { NotFoundError } from '../../accounts/errors.ts';
import { withStore } from '../context.ts';
import { str } from '../flags.ts';
import { table } from '../format.ts';

/** `nodegate webhooks`: the webhooks of the store and their deliveries (the API and dashboard make and change them). */
export const WEBHOOK_COMMANDS: Record<string, Subcommand> = {
  list: {
    usage: 'list [--account ID] [--json]',
    summary: "list webhooks (everyone's, or one account's)",
    options: { ...JSON_FLAG, account: { type: 'string' } },
    run: withStore(async (cx, v) => {
      const hooks = (await cx.store.webhooks.listWebhooks(str(v, 'account'))).map(({ secret: _s, ...w }) => w);
      return {
        json: { webhooks: hooks },
        text: table(['ID', 'ACCOUNT', 'NETWORK', 'KIND', 'URL', 'STATUS'], hooks.map((w) => [w.id, w.accountId, w.network || '-', w.kind, w.url, w.disabledReason ? `${w.status}: ${w.disabledReason}` : w.status]), 'no webhooks'),
      };
    }),
  },
  deliveries: {
    usage: 'deliveries ID [--json]',
    summary: "a webhook's newest 50 events and their deliveries",
    options: JSON_FLAG,
    args: ['ID'],
    run: withStore(async (cx, _v, [id]) => {
      if (!(await cx.store.webhooks.getWebhook(id))) throw new NotFoundError(`webhook ${id}`);
      const events = (await cx.store.webhookEvents.listWebhookEvents(id, 50)).map(({ body: _b, ...e }) => e);
      return {
        json: { deliveries: events },
        text: table(['EVENT', 'TYPE', 'CREATED', 'STATUS', 'ATTEMPTS', 'LAST', 'ERROR'], events.map((e) => [e.id, e.type, e.createdAt, e.status, String(e.attempts), String(e.lastStatus ?? '-'), e.lastError ?? '']), 'no events'),
      };
    }),
  },
};
