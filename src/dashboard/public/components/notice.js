// @ts-check
// Page-level messages: a part of the page that the server cannot give yet (a route that this gateway
// does not have) says so plainly instead of failing, and a failed load says what failed.
import { ApiFailure } from '../lib/api.js';
import { h } from '../lib/dom.js';

/**
 * What to show in place of a part that failed to load.
 * @param {unknown} err
 * @param {string} what e.g. "Team members"
 */
export function failed(err, what) {
  if (err instanceof ApiFailure && err.missingRoute) {
    return h('p', { class: 'notice', role: 'status' }, `${what}: this gateway does not offer this yet (it needs a newer Nodegate version).`);
  }
  if (err instanceof ApiFailure && err.status === 403) return h('p', { class: 'notice', role: 'status' }, `${what}: ${err.message}`);
  return h('p', { class: 'form-error', role: 'alert' }, `${what} could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
}

/** A note that the user's role can read but not change this. @param {string} role */
export const readOnlyNote = (role) => h('p', { class: 'notice' }, `You are a ${role} of this account: you can see this, but only an owner or developer can change it.`);
