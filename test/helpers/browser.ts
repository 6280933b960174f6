import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core, for the dashboard's browser tests: one launch, pages watched for script
 * errors and CSP violations, the dashboard's login, and axe-core's serious and critical findings.
 */
export const CHROMIUM = '/usr/bin/chromium';

/** A newcomer's laptop may lack Debian's Chromium: said plainly, and never under CI, where .ci/run installs it. */
export const browserSkip = !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium); browser tests skipped` : false;

const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

export type Watched = Page & { errors: string[] };

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/** A page of a new browser context (its own cookies) on `origin`, watched for script errors and CSP violations. */
export async function openPage(browser: Browser, origin: string, width = 1200, opts: { bypassCSP?: boolean } = {}): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, ...opts });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = (await context.newPage()) as Watched;
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  // A failed fetch the page handles (401 before login) is not an error of the page.
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.errors.push(m.text()); });
  return page;
}

/** Waits for the dashboard page titled `title`. */
export const heading = (page: Page, title: string) => page.waitForSelector(`#page-title:text-is(${JSON.stringify(title)})`);

/** Logs in on the dashboard's login page (the page is left on the overview). */
export async function logIn(page: Page, origin: string, email: string, password: string): Promise<void> {
  await page.goto(`${origin}/dashboard/#/login`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('#login');
  await heading(page, 'Overview');
}

/** axe-core's serious and critical violations on the page as it is now (the page's context needs bypassCSP). */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const r = await (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } })
      .axe.run(document, { resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
}
