// Launches Debian's chromium through playwright-core and watches pages for console errors (CSP included).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { ROOT } from '../helpers/paths.js';

// A page global used inside evaluate(): the project compiles without the DOM lib.
declare const requestAnimationFrame: (callback: () => void) => number;

export const CHROMIUM = process.env.AZC_CHROMIUM ?? '/usr/bin/chromium';
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
  existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt-get install -y chromium)`;

export interface Browser {
  /** A fresh, isolated context (own sessionStorage) on one shared browser. */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * Chromium for one test, closed in its teardown. chromium.launch gives every run a fresh temporary profile
 * (user-data-dir) and removes it on close.
 */
export async function launch(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 20_000 });
  t.teardown(() => browser.close());
  return {
    context: (options) => browser.newContext({ viewport: { width: 1280, height: 860 }, ...options }),
    close: () => browser.close(),
  };
}

export interface ConsoleWatch {
  /** Unexpected console errors and uncaught exceptions: a test fails on any. */
  errors: string[];
  /** Errors matching an allowed pattern, kept apart so a test can still look at them. */
  tolerated: string[];
  allow(pattern: RegExp): void;
}

/** Collects console errors (CSP violations show up here) and uncaught exceptions. */
export function watchConsole(page: Page): ConsoleWatch {
  const allowed: RegExp[] = [];
  const watch: ConsoleWatch = { errors: [], tolerated: [], allow: (pattern) => allowed.push(pattern) };
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
