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
 * @param {string} id
 * @param {[string, string]} heads the values table's column heads
 */
function withValues(svg, name, points, id, heads) {
  const table = cardTable({ caption: name, columns: [{ title: heads[0], cell: (p) => p.label }, { title: heads[1], cell: (p) => fmt(p.value) }], rows: points, empty: 'No values.' });
  return h('figure', { class: 'chart' }, svg, h('details', {}, h('summary', {}, `Values of this chart`), table), h('figcaption', { class: 'visually-hidden', id: `${id}-name` }, name));
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
  return withValues(svg, o.name, points, o.id, ['Time (UTC)', o.unit]);
}

/**
 * Horizontal bars, in the order given.
 * @param {Point[]} items
 * @param {{ id: string, name: string, unit: string, head: string }} o
 */
export function barChart(items, o) {
  const width = 720;
  const row = 24;
  const height = Math.max(row, items.length * row + 4);
  const name = `${o.name}: ${items.slice(0, 3).map((i) => `${i.label} ${fmt(i.value)}`).join(', ')}${items.length > 3 ? `, and ${items.length - 3} more` : ''}`;
  const svg = /** @type {SVGSVGElement} */ (/** @type {unknown} */ (el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': name, id: o.id, class: 'bars' })));
  const max = Math.max(1, ...items.map((i) => i.value));
  const labelW = 260;
  items.forEach((it, i) => {
    const top = i * row + 2;
    svg.append(el('text', { x: 0, y: top + 15 }, it.label.length > 34 ? `${it.label.slice(0, 33)}…` : it.label));
    svg.append(el('rect', { x: labelW, y: top + 4, height: 14, width: Math.max(1, ((width - labelW - 90) * it.value) / max), rx: 3, class: 'bar' }));
    svg.append(el('text', { x: width - 4, y: top + 15, 'text-anchor': 'end' }, fmt(it.value)));
  });
  return withValues(svg, o.name, items, o.id, [o.head, o.unit]);
}
