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
 * @property {boolean} canChange developer or owner: keys, webhooks, alerts
 * @property {boolean} isOwner members and invitations
 * @property {boolean} isOperator
 * @property {(s: import('./types.js').Session) => void} signedIn
 * @property {(fn: () => void) => void} onLeave runs when the user goes to another page
 */

/**
 * @typedef {object} Page
 * @property {string} title the heading and the document's title
 * @property {Node} body
 */

export {};
