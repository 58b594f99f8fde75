// Shared steps of the dashboard tests: signing in through the form, waiting on API state, finding unnamed controls.
import type { BrowserContextOptions, Locator, Page } from 'playwright-core';
import { WAIT_MS, waitFor } from '../helpers/wait-for.js';
import { type Browser, watchConsole } from './browser.js';

// A page global used inside evaluate() callbacks: the project compiles without the DOM lib.
declare const document: any;

export const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
  colorScheme: 'dark',
};

/** Polls until `check` holds (for state behind the API, where there is no event to await in the test). */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs?: number): Promise<void> {
  await waitFor(check, timeoutMs, { what });
}

export interface Session {
  page: Page;
  console: ReturnType<typeof watchConsole>;
  /** Every URL the page requested, to prove no credential ever travels in one. */
  urls: string[];
}

/** Opens `base + path` in a fresh context and signs in through the form; `live` waits for the event stream. */
export async function signIn(
  browser: Browser,
  base: string,
  username: string,
  password: string,
  options: BrowserContextOptions = {},
  { path = '/', live = true }: { path?: string; live?: boolean } = {},
): Promise<Session> {
  const context = await browser.context(options);
  // The suite's one bound on a wait (wait-for.ts): it only decides how long a failing step takes to say so. 8 s was
  // too short for a page's first load while a CPU hog and three other test files shared the machine's two cores.
  context.setDefaultTimeout(WAIT_MS);
  const page = await context.newPage();
  const session: Session = { page, console: watchConsole(page), urls: [] };
  page.on('request', (request) => session.urls.push(request.url()));
  await page.goto(`${base}${path}`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (live) await page.locator('#conn[data-state="live"]').waitFor();
  return session;
}

/**
 * Presses the mouse on a horizontal slider at `at` (a fraction of its width) and holds it; `to` drags along it, in
 * `steps` pointer moves, and `release` lets go. A person's drag, as the page sees it.
 */
export async function grabSlider(page: Page, slider: Locator, at: number) {
  const box = (await slider.boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * at, y);
  await page.mouse.down();
  return {
    to: (fraction: number, steps: number) => page.mouse.move(box.x + box.width * fraction, y, { steps }),
    /** Lets go, and waits until the control has nothing on its way (aria-busy gone): the next step starts clean. */
    release: async () => {
      await page.mouse.up();
      await slider.and(page.locator(':not([aria-busy])')).waitFor();
    },
  };
}

/** Controls in the shown view or header without an accessible name (label, aria-label or text): should be none. */
export const unlabelled = (page: Page, scope = 'header, main'): Promise<string[]> =>
  page.evaluate(
    (scope) =>
      [
        ...document.querySelectorAll(
          scope
            .split(',')
            .flatMap((s: string) =>
              ['button', 'input', 'select', '[role=meter]', 'summary'].map((c) => `${s.trim()} ${c}`),
            )
            .join(', '),
        ),
      ]
        .filter((el: any) => !el.closest('[hidden]'))
        .filter((el: any) => {
          const labels = [...(el.labels ?? [])].map((label: any) => label.textContent).join(' ');
          return !(
            el.getAttribute('aria-label') ||
            el.getAttribute('aria-labelledby') ||
            labels.trim() ||
            el.textContent.trim()
          );
        })
        .map((el: any) => el.outerHTML.slice(0, 160)),
    scope,
  );
