// @ts-check
// Small SVG charts drawn in the page (no library, nothing fetched elsewhere). Each has an accessible name that says
// what it shows and its largest value, and beside it the same numbers as a table (a <details>), for screen readers
// and for anyone who wants the values. The SVG scales to its container (viewBox, width 100 %): no sideways scroll on a phone.
import { fmt, h } from '../lib/dom.js';
import { cardTable } from './table.js';

const NS = 'http://www.w3.org/2000/svg';
/** @param {string} name @param {Record<string, string | number>} attrs @param {string | number} [text] */
const el = (name, attrs, text) => {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
};

/** @typedef {{ label: string, value: number }} Point */

/**
 * @param {SVGSVGElement} svg
 * @param {string} name
 * @param {Point[]} points
 * @param {[string, string]} heads the values table's column heads
 */
function withValues(svg, name, points, heads) {
  const table = cardTable({ caption: name, columns: [{ title: heads[0], cell: (p) => p.label }, { title: heads[1], cell: (p) => fmt(p.value) }], rows: points, empty: 'No values.' });
  return h('figure', { class: 'chart' }, svg, h('details', {}, h('summary', {}, 'Values of this chart'), table));
}

/**
 * A line with its area, of `points` in time order.
 * @param {Point[]} points
 * @param {{ id: string, name: string, unit: string }} o
 */
export function lineChart(points, o) {
  const width = 720;
  const height = 200;
  const max = Math.max(1, ...points.map((p) => p.value));
  const total = points.reduce((a, p) => a + p.value, 0);
  const name = `${o.name}: ${fmt(total)} ${o.unit} in total, at most ${fmt(max)} in one interval`;
  const svg = /** @type {SVGSVGElement} */ (/** @type {unknown} */ (el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': name, id: o.id, preserveAspectRatio: 'none', class: 'line' })));
  const pad = { l: 56, r: 10, t: 12, b: 24 };
  /** @param {number} i */
  const x = (i) => pad.l + (points.length <= 1 ? 0 : (i * (width - pad.l - pad.r)) / (points.length - 1));
  /** @param {number} v */
  const y = (v) => height - pad.b - (v / max) * (height - pad.t - pad.b);
  svg.append(el('line', { x1: pad.l, y1: height - pad.b, x2: width - pad.r, y2: height - pad.b, class: 'axis' }));
  svg.append(el('text', { x: pad.l - 6, y: pad.t + 8, 'text-anchor': 'end' }, fmt(max)));
  svg.append(el('text', { x: pad.l - 6, y: height - pad.b, 'text-anchor': 'end' }, '0'));
  if (points.length > 0) {
    const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');
    svg.append(el('polygon', { points: `${x(0)},${height - pad.b} ${line} ${x(points.length - 1)},${height - pad.b}`, class: 'area' }));
    svg.append(el('polyline', { points: line, class: 'stroke' }));
    svg.append(el('text', { x: pad.l, y: height - 6 }, points[0].label));
    svg.append(el('text', { x: width - pad.r, y: height - 6, 'text-anchor': 'end' }, points[points.length - 1].label));
  }
  return withValues(svg, o.name, points, ['Time (UTC)', o.unit]);
}

/**
 * Horizontal bars, in the order given: HTML rather than SVG, so that labels keep a readable size and wrap on a phone.
 * @param {Point[]} items
 * @param {{ id: string, name: string, unit: string, head: string }} o
 */
export function barChart(items, o) {
  const name = `${o.name}: ${items.slice(0, 3).map((i) => `${i.label} ${fmt(i.value)}`).join(', ')}${items.length > 3 ? `, and ${items.length - 3} more` : ''}`;
  const max = Math.max(1, ...items.map((i) => i.value));
  const chart = h('div', { class: 'hbars', role: 'img', 'aria-label': name, id: o.id }, ...items.map((it) => {
    const fill = h('span', { class: 'fill' });
    // Through the CSSOM: the page's CSP allows no style attributes.
    fill.style.width = `${it.value === 0 ? 0 : Math.max(0.5, (100 * it.value) / max)}%`;
    return h('div', { class: 'hbar' }, h('span', { class: 'label' }, it.label), h('span', { class: 'track' }, fill), h('span', { class: 'value' }, fmt(it.value)));
  }));
  const table = cardTable({ caption: o.name, columns: [{ title: o.head, cell: (p) => p.label }, { title: o.unit, cell: (p) => fmt(p.value) }], rows: items, empty: 'No values.' });
  return h('figure', { class: 'chart' }, chart, h('details', {}, h('summary', {}, 'Values of this chart'), table));
}
