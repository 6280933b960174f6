// @ts-check
// Making elements. Everything a user or the server typed reaches the page as text nodes, never as HTML: there is
// no innerHTML anywhere in the dashboard, so a key named "<img onerror=…>" is shown as those characters.

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Record<string, string | number | boolean | null | undefined | EventListener>} Attrs */

/**
 * An element: `h('td', { class: 'x' }, 'text', child)`. `on…` attributes become listeners, `value`/`checked` are
 * set as properties, the rest as attributes (true: present, false/null/undefined: absent).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'value') /** @type {HTMLInputElement} */ (e).value = String(v);
    else if (k === 'checked') /** @type {HTMLInputElement} */ (e).checked = Boolean(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  append(e, children.flat());
  return e;
}

/**
 * @param {Element | DocumentFragment} parent
 * @param {Child[]} children
 */
export function append(parent, children) {
  for (const c of children) if (c !== null && c !== undefined && c !== false) parent.append(c instanceof Node ? c : String(c));
}

let ids = 0;
/** A unique element id for labels and descriptions. @param {string} prefix */
export const uid = (prefix) => `${prefix}-${++ids}`;

/** 1234567 → "1,234,567". @param {number | null | undefined} n */
export const fmt = (n) => Number(n ?? 0).toLocaleString('en-US');

/**
 * A large count in words people read at a glance: 1.2 million, 1 quadrillion (a quota of 10^15 must not be a wall of digits).
 * @param {number} n
 */
export function compact(n) {
  if (Math.abs(n) < 1e6) return fmt(n);
  return new Intl.NumberFormat('en-US', { notation: 'compact', compactDisplay: 'long', maximumFractionDigits: 1 }).format(n);
}

/** An ISO time as "2026-11-24 18:20 UTC", or "—". @param {string | null | undefined} iso */
export const when = (iso) => (iso ? `${new Date(iso).toISOString().replace('T', ' ').slice(0, 16)} UTC` : '—');

/** Lines or commas of a textarea, trimmed, empties dropped. @param {string} text */
export const lines = (text) => text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);

/**
 * Moves the focus to `el` (made focusable if it is not) and brings it into view: after an action, the user's
 * attention goes to what it made.
 * @param {HTMLElement | null | undefined} el
 */
export function focus(el) {
  if (!el) return;
  if (!el.matches('a, button, input, select, textarea, [tabindex]')) el.setAttribute('tabindex', '-1');
  el.focus();
  el.scrollIntoView({ block: 'nearest' });
}
