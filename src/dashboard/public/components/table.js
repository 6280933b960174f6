// @ts-check
// A table that becomes a list of cards on a phone (style.css, under 700 px): each cell carries its column's name
// (data-label) for the card layout, so nothing scrolls sideways and every value still says what it is.
import { h } from '../lib/dom.js';

/**
 * @template T
 * @typedef {object} Column
 * @property {string} title
 * @property {(row: T) => import('../lib/dom.js').Child | import('../lib/dom.js').Child[]} cell
 * @property {string} [class]
 */

/**
 * @template T
 * @param {{ id?: string, caption: string, columns: Column<T>[], rows: T[], rowAttrs?: (row: T) => Record<string, string>, empty: string }} o
 */
export function cardTable(o) {
  if (o.rows.length === 0) return h('p', { class: 'muted', id: o.id }, o.empty);
  return h('table', { class: 'cards', id: o.id },
    h('caption', { class: 'visually-hidden' }, o.caption),
    h('thead', {}, h('tr', {}, ...o.columns.map((c) => h('th', { scope: 'col' }, c.title)))),
    h('tbody', {}, ...o.rows.map((r) => h('tr', o.rowAttrs?.(r) ?? {},
      ...o.columns.map((c) => {
        const v = c.cell(r);
        // One box for the cell's content: in the card layout a cell is a grid of its label and this box.
        return h('td', { 'data-label': c.title, class: c.class }, h('div', { class: 'cell' }, ...(Array.isArray(v) ? v : [v])));
      })))));
}
