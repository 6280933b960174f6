// @ts-check
// The month's quota as a bar that stays readable for any plan: the numbers in words (30 million, not 30,000,000;
// "unlimited" from 10^15, a quota no one reaches), the share with enough decimals to move ("< 0.01 %"), and a sliver
// drawn for any use at all.
import { compact, fmt, h } from '../lib/dom.js';

/** @param {{ month: string, used: number, limit: number, plan: string }} q */
export function quotaBar(q) {
  const share = q.limit > 0 ? (100 * q.used) / q.limit : 0;
  const shown = share === 0 ? '0 %' : share < 0.01 ? 'less than 0.01 %' : share < 10 ? `${share.toFixed(2)} %` : `${Math.min(share, 999).toFixed(1)} %`;
  const fill = h('span', { class: share >= 100 ? 'over' : share >= 90 ? 'near' : '' });
  // Through the CSSOM: the page's CSP allows no style attributes. Any use shows at least a hair's width.
  fill.style.width = `${share === 0 ? 0 : Math.max(0.5, Math.min(100, share))}%`;
  const id = 'quota-bar';
  return h('section', { class: 'card', 'aria-labelledby': `${id}-h` },
    h('h2', { id: `${id}-h` }, `Quota this month (${q.month}, plan ${q.plan})`),
    h('p', { id: 'quota-used' }, q.limit >= 1e15 ? `${compact(q.used)} compute units used; the quota is unlimited` : `${compact(q.used)} of ${compact(q.limit)} compute units used (${shown})`),
    h('div', { class: 'bar', role: 'meter', 'aria-label': 'Quota used this month', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.min(100, share).toFixed(2), 'aria-valuetext': shown }, fill),
    h('p', { class: 'hint' }, `Exactly: ${fmt(q.used)} of ${fmt(q.limit)}.`));
}
