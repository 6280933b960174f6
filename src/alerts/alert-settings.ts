import type { AlertSettings } from '../store/alerts/alert-store.ts';

/** What an account that never set its alerts has: no quota thresholds, no error-rate alert, mail on. */
export const DEFAULT_ALERT_SETTINGS: AlertSettings = { quotaPercents: [], errorRate: null, email: true };

/** Quota thresholds an account may set: enough for 50/75/90/100 and a few more, never a mail per percent. */
export const MAX_QUOTA_THRESHOLDS = 10;

/** The body of `PUT /account/alerts`, checked by the API's validator (fields it names when one is wrong). */
export const alertSettingsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    quotaPercents: {
      type: 'array', maxItems: MAX_QUOTA_THRESHOLDS, items: { type: 'integer', minimum: 1, maximum: 100 },
      description: 'percentages of the plan\'s monthly compute units at which to alert, e.g. [75, 90, 100]',
    },
    errorRate: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object', additionalProperties: false, required: ['percent', 'minutes', 'minRequests'],
          properties: {
            percent: { type: 'number', minimum: 0.1, maximum: 100 },
            minutes: { type: 'integer', minimum: 1, maximum: 1440 },
            minRequests: { type: 'integer', minimum: 1, maximum: 1000000 },
          },
        },
      ],
      description: 'alert when errors are at least `percent` % of at least `minRequests` calls over the last `minutes`; null: off',
    },
    email: { type: 'boolean', description: 'also by mail (to the account\'s address), besides its usage.threshold webhooks' },
  },
} as const;

/** The settings as kept: fields left out take their defaults; thresholds once each, in increasing order. */
export function normalizeAlertSettings(body: Partial<AlertSettings>): AlertSettings {
  return {
    quotaPercents: [...new Set(body.quotaPercents ?? DEFAULT_ALERT_SETTINGS.quotaPercents)].sort((a, b) => a - b),
    errorRate: body.errorRate === undefined ? DEFAULT_ALERT_SETTINGS.errorRate : body.errorRate,
    email: body.email ?? DEFAULT_ALERT_SETTINGS.email,
  };
}
