// @ts-check
// Alerts: thresholds on the month's quota, an error-rate threshold, email on or off; and the alerts that fired.
// They go by email and to webhooks of kind usage.threshold, once per crossing.
import { Form } from '../components/form.js';
import { failed, readOnlyNote } from '../components/notice.js';
import { cardTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { h, when } from '../lib/dom.js';

/** @typedef {import('../lib/types.js').AlertSettings} AlertSettings */
/** @typedef {{ settings: AlertSettings, mail?: boolean, recent: Array<{ kind: string, threshold: number, period: string, firedAt: string, value: number }> }} Alerts */

/** Thresholds offered; any other saved value is shown too. */
const QUOTA_STEPS = [50, 75, 90, 100];

/** @param {number | undefined} v @param {number} min @param {number} max @param {string} what */
const within = (v, min, max, what) => (v === undefined || !Number.isFinite(v) || v < min || v > max ? `Enter ${what} from ${min} to ${max}.` : undefined);

/** @param {import('../lib/context.js').Ctx} ctx @returns {Promise<import('../lib/context.js').Page>} */
export async function alertsPage(ctx) {
  /** @type {Alerts} */
  let alerts;
  try {
    alerts = await api('GET', '/account/alerts');
  } catch (err) {
    return { title: 'Alerts', body: failed(err, 'Alerts') };
  }
  const s = alerts.settings;
  const steps = [...new Set([...QUOTA_STEPS, ...s.quotaPercents])].sort((a, b) => a - b);
  const rate = (/** @type {Record<string, any>} */ v) => Boolean(v.errorRateOn);
  const recent = h('div');
  const drawRecent = () => recent.replaceChildren(cardTable({
    id: 'recent-alerts', caption: 'Alerts that fired', empty: 'No alert has fired yet.', rows: alerts.recent,
    columns: [
      { title: 'When', cell: (a) => when(a.firedAt) }, { title: 'Alert', cell: (a) => (a.kind === 'quota' ? `Quota ${a.threshold} %` : `Error rate ${a.threshold} %`) },
      { title: 'Value', cell: (a) => `${a.value} %` }, { title: 'Period', cell: (a) => a.period },
    ],
  }));
  drawRecent();
  const form = new Form({
    id: 'alerts-form', submit: 'Save alerts', submitId: 'save-alerts', busyLabel: 'Saving…', keepValues: true,
    fields: [
      { name: 'quotaPercents', label: 'Alert when the month’s quota reaches', type: 'checkboxes', id: 'quota', value: s.quotaPercents.map(String), options: steps.map((p) => ({ value: String(p), label: `${p} %` })) },
      { name: 'errorRateOn', label: 'Alert on the error rate', type: 'checkbox', id: 'error-rate-on', value: s.errorRate !== null },
      { name: 'percent', label: 'Error rate above (%)', type: 'number', id: 'error-rate-percent', value: s.errorRate?.percent ?? 5, attrs: { min: 1, max: 100, step: 1 }, shown: rate, check: (v, all) => (rate(all) ? within(v, 1, 100, 'a percentage') : undefined) },
      { name: 'minutes', label: 'Over the last (minutes)', type: 'number', id: 'error-rate-minutes', value: s.errorRate?.minutes ?? 15, attrs: { min: 1, max: 1440, step: 1 }, shown: rate, check: (v, all) => (rate(all) ? within(v, 1, 1440, 'minutes') : undefined) },
      { name: 'minRequests', label: 'Only with at least (requests)', type: 'number', id: 'error-rate-min', value: s.errorRate?.minRequests ?? 100, attrs: { min: 1, step: 1 }, hint: 'So that 1 failure in 2 calls does not count as 50 %.', shown: rate, check: (v, all) => (rate(all) ? within(v, 1, 1e9, 'a number of requests') : undefined) },
      {
        name: 'email', label: 'Send alerts by email (to the account and its owners and developers)', type: 'checkbox', id: 'alert-email', value: s.email,
        hint: alerts.mail === false ? 'Mail is not configured on this gateway: alerts are not mailed; they go to your webhooks of kind usage.threshold only.' : undefined,
      },
    ],
    onSubmit: async (v) => {
      alerts = await api('PUT', '/account/alerts', {
        quotaPercents: v.quotaPercents.map(Number),
        errorRate: v.errorRateOn ? { percent: v.percent, minutes: v.minutes, minRequests: v.minRequests } : null,
        email: v.email,
      });
      drawRecent();
      return v.email && alerts.mail === false ? 'Saved. Mail is not configured on this gateway, so these alerts reach your webhooks only, not your inbox.' : 'Saved.';
    },
  });
  if (!ctx.can('changeAlerts')) for (const el of form.el.querySelectorAll('input, button')) /** @type {HTMLInputElement} */ (el).disabled = true;
  return {
    title: 'Alerts',
    body: h('div', {}, h('p', {}, 'Alerts go by email and to your webhooks of kind usage.threshold, once each time a threshold is crossed.'),
      ctx.can('changeAlerts') ? null : readOnlyNote(ctx.role), h('section', { class: 'card' }, form.el), h('h2', {}, 'Recent alerts'), recent),
  };
}
