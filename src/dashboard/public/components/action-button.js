// @ts-check
// A button for one action on a row (send a test, redeliver, pause): busy while it runs, and what happened said
// beside it (a status region), where the user is looking, not at the top of the page.
import { h } from '../lib/dom.js';

/**
 * A button that runs `work` with a busy state and says what happened in `say` (a status region beside it).
 * @param {string} label @param {Record<string, string>} attrs @param {() => Promise<string | void>} work
 */
export function actionButton(label, attrs, work) {
  const say = h('span', { class: 'inline-status', role: 'status' });
  const b = h('button', {
    type: 'button', class: 'secondary', ...attrs,
    onclick: async () => {
      b.disabled = true;
      b.setAttribute('aria-busy', 'true');
      say.textContent = '';
      say.classList.remove('bad');
      try {
        say.textContent = (await work()) ?? '';
      } catch (err) {
        say.textContent = err instanceof Error ? err.message : String(err);
        say.classList.add('bad');
      } finally {
        b.disabled = false;
        b.removeAttribute('aria-busy');
      }
    },
  }, label);
  return h('span', { class: 'action' }, b, say);
}

