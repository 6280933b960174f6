// @ts-check
// The Nodegate dashboard: the shell (header, menu, who is logged in) and the routes. Each page is a module of
// pages/ that returns its title and body; the shell puts it in <main>, names the document after it and moves the
// focus to its heading (a screen reader hears the new page). No framework, no build, nothing from elsewhere.
import { api, setCsrf, whenSignedOut } from './lib/api.js';
import { h } from './lib/dom.js';
import { loadFacts } from './lib/facts.js';
import { current, go, match } from './lib/router.js';
import { failed } from './components/notice.js';
import { loginPage } from './pages/login.js';
import { signupPage } from './pages/signup.js';
import { forgotPage } from './pages/forgot.js';
import { resetPage } from './pages/reset.js';
import { acceptPage } from './pages/accept.js';
import { overviewPage } from './pages/overview.js';
import { keysPage } from './pages/keys.js';
import { keyDetailPage } from './pages/key-detail.js';
import { usagePage } from './pages/usage.js';
import { requestsPage } from './pages/requests.js';
import { webhooksPage } from './pages/webhooks.js';
import { webhookDetailPage } from './pages/webhook-detail.js';
import { alertsPage } from './pages/alerts.js';
import { teamPage } from './pages/team.js';
import { settingsPage } from './pages/settings.js';
import { operatorAccountsPage } from './pages/operator-accounts.js';
import { operatorPlansPage } from './pages/operator-plans.js';
import { operatorNetworksPage } from './pages/operator-networks.js';

/** @typedef {import('./lib/context.js').Ctx} Ctx */
/** @typedef {import('./lib/context.js').Page} Page */
/** @typedef {import('./lib/types.js').Session} Session */

/** @type {Array<{ path: string, page: (ctx: Ctx) => Promise<Page>, public?: boolean, operator?: boolean }>} */
const ROUTES = [
  { path: '/login', page: loginPage, public: true },
  { path: '/signup', page: signupPage, public: true },
  { path: '/forgot', page: forgotPage, public: true },
  { path: '/reset', page: resetPage, public: true },
  { path: '/accept', page: acceptPage, public: true },
  { path: '/overview', page: overviewPage },
  { path: '/keys', page: keysPage },
  { path: '/keys/:id', page: keyDetailPage },
  { path: '/usage', page: (ctx) => usagePage(ctx) },
  { path: '/requests', page: (ctx) => requestsPage(ctx) },
  { path: '/webhooks', page: webhooksPage },
  { path: '/webhooks/:id', page: webhookDetailPage },
  { path: '/alerts', page: alertsPage },
  { path: '/team', page: teamPage },
  { path: '/settings', page: settingsPage },
  { path: '/operator/accounts', page: operatorAccountsPage, operator: true },
  { path: '/operator/plans', page: operatorPlansPage, operator: true },
  { path: '/operator/networks', page: operatorNetworksPage, operator: true },
  { path: '/operator/usage', page: (ctx) => usagePage(ctx, true), operator: true },
  { path: '/operator/requests', page: (ctx) => requestsPage(ctx, true), operator: true },
];

/** The menu: [route, label]; the operator's after a separator. */
const MENU = [['/overview', 'Overview'], ['/keys', 'API keys'], ['/usage', 'Usage'], ['/requests', 'Requests'], ['/webhooks', 'Webhooks'], ['/alerts', 'Alerts'], ['/team', 'Team'], ['/settings', 'Settings']];
const OPERATOR_MENU = [['/operator/accounts', 'Accounts'], ['/operator/plans', 'Plans'], ['/operator/networks', 'Networks'], ['/operator/usage', "Everyone's usage"], ['/operator/requests', "Everyone's requests"]];

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));
const menuButton = /** @type {HTMLButtonElement} */ (document.getElementById('menu-button'));
const who = /** @type {HTMLElement} */ (document.getElementById('who'));

/** @type {Session | null} */
let session = null;
/** @type {Array<() => void>} */
let leaving = [];
const facts = await loadFacts();

/** @param {Session} s */
function signedIn(s) {
  session = s;
  setCsrf(s.csrfToken);
  drawHeader();
  const { path } = current();
  if (ROUTES.find((r) => match(r.path, path))?.public || path === '/') go('#/overview');
  else void route();
}

function signedOut() {
  session = null;
  setCsrf('');
  drawHeader();
  go('#/login?m=ended');
}

const role = () => session?.role ?? 'owner';
const isOperator = () => session?.account.role === 'operator' && role() === 'owner';

function drawHeader() {
  nav.replaceChildren();
  who.replaceChildren();
  menuButton.hidden = !session;
  if (!session) return;
  const link = (/** @type {string} */ path, /** @type {string} */ label) => h('li', {}, h('a', { href: `#${path}`, id: `nav-${path.slice(1).replace('/', '-')}` }, label));
  nav.append(h('ul', {}, ...MENU.map(([p, l]) => link(p, l))));
  if (isOperator()) nav.append(h('p', { class: 'nav-group', id: 'operator-menu' }, 'Operator'), h('ul', { 'aria-labelledby': 'operator-menu' }, ...OPERATOR_MENU.map(([p, l]) => link(p, l))));
  const me = session.member ?? session.account;
  who.append(h('span', {}, `${me.email} · ${role()}${isOperator() ? ' · operator' : ''}`), ' ',
    h('button', {
      type: 'button', class: 'link', id: 'logout',
      onclick: async () => {
        await api('DELETE', '/session').catch(() => {});
        session = null;
        drawHeader();
        go('#/login?m=out');
      },
    }, 'Log out'));
  markActive();
}

function markActive() {
  const { path } = current();
  for (const a of nav.querySelectorAll('a')) {
    const here = path === a.getAttribute('href')?.slice(1) || path.startsWith(`${a.getAttribute('href')?.slice(1)}/`);
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

/** Counts the routes taken: a page that finishes loading after the next route began is not shown. */
let routed = 0;

async function route() {
  const turn = ++routed;
  for (const fn of leaving) fn();
  leaving = [];
  const { path, query } = current();
  let found = ROUTES.map((r) => ({ r, params: match(r.path, path) })).find((x) => x.params);
  if (!found || (!session && !found.r.public) || (found.r.operator && !isOperator())) {
    if (!session) return go('#/login');
    found = { r: /** @type {typeof ROUTES[number]} */ (ROUTES.find((r) => r.path === '/overview')), params: {} };
    if (path !== '/overview') return go('#/overview');
  }
  nav.classList.remove('open');
  menuButton.setAttribute('aria-expanded', 'false');
  markActive();
  main.setAttribute('aria-busy', 'true');
  /** @type {Ctx} */
  const ctx = {
    session, facts, params: found.params ?? {}, query, role: role(), can: (action) => facts.roles.find((r) => r.name === role())?.can.includes(action) ?? false, isOperator: isOperator(),
    signedIn, onLeave: (fn) => { leaving.push(fn); },
  };
  let page;
  try {
    page = await found.r.page(ctx);
  } catch (err) {
    page = { title: 'Something went wrong', body: failed(err, 'This page') };
  }
  // The user went elsewhere meanwhile (a page's own filters rewrite the address without routing: not a new route).
  if (turn !== routed) return;
  const heading = h('h1', { tabindex: -1, id: 'page-title' }, page.title);
  main.replaceChildren(heading, page.body);
  main.setAttribute('aria-busy', 'false');
  document.title = `${page.title} · Nodegate`;
  (page.focus ?? heading).focus();
}

menuButton.addEventListener('click', () => {
  const open = nav.classList.toggle('open');
  menuButton.setAttribute('aria-expanded', String(open));
});
document.getElementById('skip')?.addEventListener('click', () => (document.getElementById('page-title') ?? main).focus());
whenSignedOut(() => { if (session) signedOut(); });
window.addEventListener('hashchange', () => void route());

// A page opened by its path (/dashboard/settings) is the same page as its hash (#/settings).
const deep = location.pathname.replace(/^\/dashboard\/?/, '');
if (deep) history.replaceState(null, '', `/dashboard/${location.hash || `#/${deep}`}`);

try {
  const s = /** @type {Session} */ (await api('GET', '/session'));
  session = s;
  setCsrf(s.csrfToken);
} catch {
  session = null;
}
drawHeader();
if (session && (current().path === '/' || current().path === '/login')) go('#/overview');
else void route();
