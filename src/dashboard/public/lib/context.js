// @ts-check
// What every page is given: who is logged in and what they may do, the facts, the route's parameters, and hooks
// to leave the page cleanly (timers of live refresh).

/**
 * @typedef {object} Ctx
 * @property {import('./types.js').Session | null} session
 * @property {import('./types.js').Facts} facts
 * @property {Record<string, string>} params
 * @property {URLSearchParams} query
 * @property {import('./types.js').MemberRole} role owner for the account's own login
 * @property {(action: string) => boolean} can whether the role may do `action` (the server's rules, from the facts:
 *   changeKeys, changeWebhooks, changeAlerts, manageTeam…); the server refuses anyway, this only hides what would fail
 * @property {boolean} isOperator
 * @property {(s: import('./types.js').Session) => void} signedIn
 * @property {(fn: () => void) => void} onLeave runs when the user goes to another page
 */

/**
 * @typedef {object} Page
 * @property {string} title the heading and the document's title
 * @property {Node} body
 * @property {HTMLElement} [focus] what takes the focus when the page opens (default: its heading); a page with one
 *   thing to do (the login's email) starts there
 */

export {};
