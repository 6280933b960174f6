// @ts-check
// A copy button with a name of its own: "Copy HTTPS URL for mainnet", not six buttons all called "Copy" (a screen
// reader's list of buttons must say which is which). It says "Copied" (also to screen readers) when it worked.
import { h } from '../lib/dom.js';

/**
 * @param {() => string} text what to copy, read when clicked (a box the user may have edited)
 * @param {string} what the name's object: "Copy <what>"
 * @param {string} [id]
 */
export function copyButton(text, what, id) {
  const said = h('span', { class: 'visually-hidden', role: 'status' });
  const button = h('button', {
    type: 'button', class: 'secondary copy', id, 'aria-label': `Copy ${what}`,
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(text());
        button.textContent = 'Copied';
        said.textContent = `${what} copied`;
      } catch {
        button.textContent = 'Select and copy by hand';
        said.textContent = 'Copying was refused by the browser';
      }
      setTimeout(() => { button.textContent = 'Copy'; said.textContent = ''; }, 2500);
    },
  }, 'Copy');
  return h('span', { class: 'copy-wrap' }, button, said);
}

/**
 * A read-only box holding a value to copy, with its label and copy button.
 * @param {{ label: string, value: string, id?: string, what?: string, copyId?: string }} o
 */
export function copyBox(o) {
  const id = o.id ?? `box-${Math.random().toString(36).slice(2)}`;
  const input = h('input', { id, type: 'text', readonly: true, value: o.value, class: 'mono', spellcheck: 'false' });
  input.addEventListener('focus', () => input.select());
  return h('div', { class: 'field copy-box' }, h('label', { for: id }, o.label), h('div', { class: 'with-button' }, input, copyButton(() => input.value, o.what ?? o.label, o.copyId)));
}

/**
 * A code snippet with its copy button.
 * @param {string} title
 * @param {string} code
 * @param {string} of what it is for (the network): part of the copy button's name
 */
export function snippet(title, code, of) {
  return h('figure', { class: 'snippet' }, h('figcaption', {}, title, ' ', copyButton(() => code, `${title} snippet for ${of}`)), h('pre', { tabindex: 0 }, h('code', {}, code)));
}
