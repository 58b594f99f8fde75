// Shared steps of the dashboard tests: signing in through the form, waiting on API state, finding unnamed controls.
import type { BrowserContextOptions, Locator, Page, Request, Response } from 'playwright-core';
import { WAIT_MS, waitFor } from '../helpers/wait-for.js';
import { type Browser, watchConsole } from './browser.js';

// A page global used inside evaluate() callbacks: the project compiles without the DOM lib.
declare const document: any;
declare const location: { hash: string };

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
  // What went wrong on the way to the form, for a failure to name: a form that never shows means the dashboard's
  // script did not run or stopped before it, and only these say why.
  // Watched until the form shows, not for the page's whole life.
  const failed: string[] = [];
  const onFailed = (request: Request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`);
  const onResponse = (response: Response) => {
    if (response.status() >= 400) failed.push(`${response.url()}: ${response.status()}`);
  };
  page.on('requestfailed', onFailed).on('response', onResponse);
  await page.goto(`${base}${path}`);
  try {
    await page.getByLabel('Username').fill(username);
  } catch (err) {
    const message = (err as Error).message.split('\n')[0];
    throw new Error(
      `the sign-in form: ${message}; console errors ${JSON.stringify(session.console.errors)}, ` +
        `requests that failed ${JSON.stringify(failed)}`,
    );
  } finally {
    page.off('requestfailed', onFailed).off('response', onResponse);
  }
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (live) await page.locator('#conn[data-state="live"]').waitFor();
  return session;
}

/**
 * A test's share of a signed-in page that several tests of a file use: a page costs a renderer, the dashboard's load
 * and its first event stream, most of a browser test's CPU. The test sees only the console errors logged while it
 * runs, a pattern it allows ends with it, and its teardown puts the page back as a sign-in shows it (`settle`), so no
 * test depends on what another left or on the order they run in.
 */
export function share(t: { teardown(fn: () => unknown): void }, session: Session): Session {
  const from = session.console.errors.length;
  const allowed: Array<() => void> = [];
  t.teardown(async () => {
    for (const end of allowed) end();
    await settle(session.page);
  });
  return {
    page: session.page,
    urls: session.urls,
    console: {
      get errors() {
        return session.console.errors.slice(from);
      },
      tolerated: session.console.tolerated,
      allow: (pattern) => {
        const end = session.console.allow(pattern);
        allowed.push(end);
        return end;
      },
    },
  };
}

/**
 * Closes open dialogs, dismisses the messages, folds what was unfolded (the music library back at its top) and shows
 * the Players view, as the page is after signing in.
 */
export async function settle(page: Page): Promise<void> {
  await page.evaluate(() => {
    for (const dialog of document.querySelectorAll('dialog[open]')) (dialog.forceClose ?? dialog.close).call(dialog);
    for (const toast of [...document.getElementById('toasts').children]) toast.dismiss();
    for (const top of document.querySelectorAll('.lib-crumbs > .lib-crumb:first-child:not([aria-current])'))
      top.click();
    for (const box of document.querySelectorAll('details[open]')) box.open = false;
    location.hash = '#players';
  });
  await page.waitForFunction(() => document.querySelector('dialog') === null);
  await page.locator('section.view[data-view="players"]:not([hidden])').waitFor();
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
