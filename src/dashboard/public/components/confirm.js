// @ts-check
// A confirmation in the page's own <dialog> (modal: focus inside, Escape cancels, focus back where it was), for
// changes that cannot be taken back or that change what someone pays (a plan change).
import { h } from '../lib/dom.js';

/**
 * Asks; resolves true when confirmed.
 * @param {{ title: string, body: string, confirm: string, tone?: 'danger' | '' }} o
 * @returns {Promise<boolean>}
 */
export function confirmDialog(o) {
  const before = /** @type {HTMLElement | null} */ (document.activeElement);
  return new Promise((resolve) => {
    const titleId = `dlg-${Date.now()}`;
    const yes = h('button', { type: 'button', class: o.tone ?? '', id: 'confirm-yes' }, o.confirm);
    const no = h('button', { type: 'button', class: 'secondary', id: 'confirm-no' }, 'Cancel');
    const dialog = h('dialog', { 'aria-labelledby': titleId, class: 'confirm' }, h('h2', { id: titleId }, o.title), h('p', {}, o.body), h('div', { class: 'actions' }, yes, no));
    /** @param {boolean} answer */
    const close = (answer) => {
      dialog.close();
      dialog.remove();
      before?.focus();
      resolve(answer);
    };
    yes.addEventListener('click', () => close(true));
    no.addEventListener('click', () => close(false));
    dialog.addEventListener('cancel', (ev) => { ev.preventDefault(); close(false); });
    document.body.append(dialog);
    dialog.showModal();
    no.focus();
  });
}
