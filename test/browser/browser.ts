// Launches Debian's Chromium headless shell through playwright-core and watches pages for console errors (CSP
// included).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
  type Browser as PlaywrightBrowser,
} from 'playwright-core';
import tap from 'tap';
import { ROOT } from '../helpers/paths.js';

// A page global used inside evaluate(): the project compiles without the DOM lib.
declare const requestAnimationFrame: (callback: () => void) => number;

/**
 * Debian's `chromium-headless-shell`: the same Chromium (version, Blink, V8) built as the headless shell, without the
 * browser's windowing layer, as playwright runs Chromium headless by default. The same browser files take about a
 * quarter less CPU with it than with the full browser in `--headless` mode (docs/tests.md). `AZC_CHROMIUM` names
 * another.
 */
export const CHROMIUM = process.env.AZC_CHROMIUM ?? '/usr/bin/chromium-headless-shell';
export const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'screenshots');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const chromiumMissing = (): string | false =>
  existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt-get install -y chromium-headless-shell)`;

export interface Browser {
  /** A fresh, isolated context (own cookies, storage and cache) on the file's one Chromium. */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
}

/** The file's Chromium, launched by the first test that asks for it. */
let running: Promise<PlaywrightBrowser> | undefined;

/**
 * Chromium for one test: the contexts it opens are closed in its teardown, so nothing of it outlives it (no page
 * left polling a daemon that stopped). The browser process itself is shared by the tests of the file, as starting
 * one costs seconds of CPU, and closed when the file's last test ends. chromium.launch gives it a fresh temporary
 * profile (user-data-dir) and removes it on close; contexts share nothing with each other.
 */
export async function launch(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  if (!running) {
    running = chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 20_000 });
    const launched = running;
    // A launch that failed has failed the test that asked for it already: nothing to close then.
    tap.teardown(() =>
      launched.then(
        (browser) => browser.close(),
        () => undefined,
      ),
    );
  }
  const browser = await running;
  const contexts = new Set<BrowserContext>();
  t.teardown(() => Promise.all([...contexts].map((context) => context.close())));
  return {
    async context(options) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, ...options });
      contexts.add(context);
      return context;
    },
  };
}

export interface ConsoleWatch {
  /** Unexpected console errors and uncaught exceptions: a test fails on any. */
  errors: string[];
  /** Errors matching an allowed pattern, kept apart so a test can still look at them. */
  tolerated: string[];
  /** Tolerates errors matching `pattern` from now on; the function returned ends that (for a page tests share). */
  allow(pattern: RegExp): () => void;
}

/** Collects console errors (CSP violations show up here) and uncaught exceptions. */
export function watchConsole(page: Page): ConsoleWatch {
  const allowed: RegExp[] = [];
  const watch: ConsoleWatch = {
    errors: [],
    tolerated: [],
    allow: (pattern) => {
      allowed.push(pattern);
      return () => {
        const at = allowed.indexOf(pattern);
        if (at >= 0) allowed.splice(at, 1);
      };
    },
  };
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = `${message.text()} (${message.location().url})`;
    (allowed.some((re) => re.test(text)) ? watch.tolerated : watch.errors).push(text);
  });
  page.on('pageerror', (error) => watch.errors.push(`uncaught: ${error.message}`));
  return watch;
}

/** Saves test-artifacts/screenshots/<name>.png; phones get the viewport only, as a person would see it. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  // Let transitions finish so the picture shows the settled state, not a frame mid-animation.
  await page.evaluate(
    () => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))),
  );
  await page.screenshot({ path: file, fullPage, animations: 'disabled' });
  return file;
}
