// @ts-check
// "New …" behind a button: a page shows its list first, and the form to make one more opens on demand (at
// 1280x800 an always-open form pushed the list a screen down). The button says whether the form is open; Cancel
// or a made item closes it, emptied, and gives the focus back to the button.
import { h } from '../lib/dom.js';

/**
 * @param {{ id: string, label: string, form: import('./form.js').Form, onOpen?: () => void }} o
 *   id: the button is `<id>-open`, the panel `<id>-panel`
 */
export function createPanel(o) {
  const panel = h('div', { class: 'card', id: `${o.id}-panel`, hidden: true }, o.form.el);
  const button = h('button', { type: 'button', id: `${o.id}-open`, 'aria-expanded': 'false', 'aria-controls': `${o.id}-panel` }, o.label);
  const open = () => {
    panel.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    o.onOpen?.();
    /** @type {HTMLElement | null} */ (panel.querySelector('input:not([type=hidden]), select, textarea'))?.focus();
  };
  const close = () => {
    o.form.reset();
    panel.hidden = true;
    button.setAttribute('aria-expanded', 'false');
  };
  button.addEventListener('click', () => (panel.hidden ? open() : close()));
  const cancel = h('button', { type: 'button', class: 'secondary', id: `${o.id}-cancel`, onclick: () => { close(); button.focus(); } }, 'Cancel');
  o.form.el.querySelector('.actions')?.append(cancel);
  return { button, panel, open, close, el: h('div', { class: 'create' }, h('p', { class: 'actions' }, button), panel) };
}
