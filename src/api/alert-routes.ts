import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { alertSettingsBody, DEFAULT_ALERT_SETTINGS, normalizeAlertSettings } from '../alerts/alert-settings.ts';
import type { AlertSettings, AlertStore } from '../store/alerts/alert-store.ts';
import { requireRole } from './auth.ts';
import { errorResponses } from './schemas.ts';

const security: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }];
const tags = ['account'];
/** Fired alerts shown with the settings, newest first. */
const RECENT = 20;

const settingsSchema = {
  type: 'object', required: ['quotaPercents', 'errorRate', 'email'],
  properties: {
    quotaPercents: { type: 'array', items: { type: 'integer' } },
    errorRate: { anyOf: [{ type: 'null' }, { type: 'object', properties: { percent: { type: 'number' }, minutes: { type: 'integer' }, minRequests: { type: 'integer' } } }] },
    email: { type: 'boolean' },
  },
} as const;
const answer = {
  description: 'The settings and the alerts that fired recently',
  type: 'object', required: ['settings', 'recent', 'mail'],
  properties: {
    settings: settingsSchema,
    mail: { type: 'boolean', description: 'whether this gateway can send mail (mail.smtp.host): without it, alerts set to email are not mailed' },
    recent: {
      type: 'array',
      items: { type: 'object', properties: { kind: { enum: ['quota', 'errorRate'] }, threshold: { type: 'number' }, period: { type: 'string' }, firedAt: { type: 'string' }, value: { type: 'number' } } },
    },
  },
} as const;

/**
 * The account's usage alerts: `GET /account/alerts` the settings and what fired lately, `PUT` to change
 * them. The checker (alerts/alert-checker.ts) reads the settings from the store on its next round.
 */
export async function alertRoutes(api: FastifyInstance, opts: { alerts: AlertStore; authenticate: onRequestAsyncHookHandler; mailConfigured: boolean }) {
  const { alerts } = opts;
  api.addHook('onRequest', opts.authenticate);
  const me = (req: FastifyRequest) => req.principal!.account.id;
  const view = async (accountId: string) => ({
    mail: opts.mailConfigured,
    settings: (await alerts.getAlertSettings(accountId)) ?? DEFAULT_ALERT_SETTINGS,
    recent: (await alerts.listFiredAlerts(accountId, RECENT)).map(({ kind, threshold, period, firedAt, value }) => ({ kind, threshold, period, firedAt, value })),
  });

  api.get('/account/alerts', {
    schema: { summary: "The account's usage alerts and those that fired recently", tags, security, response: { 200: answer, ...errorResponses(401, 403) } },
  }, async (req) => view(me(req)));

  // Changes need a developer or an owner (accounts/roles.ts); a viewer reads them.
  api.put<{ Body: Partial<AlertSettings> }>('/account/alerts', {
    schema: {
      summary: "Set the account's usage alerts: quota thresholds, an error-rate alert, mail or not (fields left out take their defaults)", tags, security,
      body: alertSettingsBody, response: { 200: answer, ...errorResponses(400, 401, 403) },
    },
  }, async (req) => {
    requireRole(req, 'changeAlerts');
    await alerts.putAlertSettings(me(req), normalizeAlertSettings(req.body), new Date().toISOString());
    return view(me(req));
  });
}
