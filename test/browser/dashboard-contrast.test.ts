// Every text of the dashboard readable at WCAG AA (4.5:1 against what is behind it, computed from the colours the
// browser draws) in the light theme on a 1280×800 desktop and the dark one on a 390×844 phone, and a zone that is
// off set apart from one that cannot answer by its words and its mark, not by colour alone.

import type { Page } from 'playwright-core';
import t from 'tap';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { seededDaemon } from './seed.js';
import { PHONE, type Session, share, signIn } from './session.js';

// Page globals used inside evaluate() callbacks: the project compiles without the DOM lib.
declare const getComputedStyle: (el: any, pseudo?: string) => any;

const DESKTOP = { viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const };
const VIEWS = ['Players', 'Playlists', 'Inputs', 'Users', 'Settings'] as const;
const AA = 4.5;

/**
 * Every shown text in the header and the view with its contrast ratio: the text's colour (its alpha and the opacity
 * of every element above it included) over the backgrounds found walking up from it, blended as drawn. Page source
 * in a string: the test loader names the functions it compiles, and the page has no such helper.
 */
const CONTRASTS = String.raw`(() => {
  const parse = (value) => {
    const srgb = /color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: \/ ([\d.e-]+))?\)/.exec(value);
    if (srgb) return [srgb[1] * 255, srgb[2] * 255, srgb[3] * 255, srgb[4] === undefined ? 1 : Number(srgb[4])];
    const [r, g, b, a] = (value.match(/[\d.]+/g) ?? ['0', '0', '0', '0']).map(Number);
    return [r, g, b, a ?? 1];
  };
  const over = (top, bottom) => {
    const a = top[3] + bottom[3] * (1 - top[3]);
    const mix = (i) => (a === 0 ? 0 : (top[i] * top[3] + bottom[i] * bottom[3] * (1 - top[3])) / a);
    return [mix(0), mix(1), mix(2), a];
  };
  const luminance = ([r, g, b]) => {
    const lin = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  // The canvas under everything: the browser's, white or (dark scheme) black.
  const canvas = matchMedia('(prefers-color-scheme: dark)').matches ? [0, 0, 0, 1] : [255, 255, 255, 1];
  const background = (el) => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) layers.push(parse(getComputedStyle(node).backgroundColor));
    return layers.reverse().reduce((below, layer) => over(layer, below), canvas);
  };
  const opacity = (el) => {
    let product = 1;
    for (let node = el; node; node = node.parentElement) product *= Number(getComputedStyle(node).opacity);
    return product;
  };
  const ownText = (el) => [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent.trim()).join(' ').trim();
  // WCAG 1.4.3 leaves out the text of a control that is disabled: that greying says it cannot be used now.
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility === 'visible' && !el.closest('[hidden], .sr-only, option, :disabled');
  return [...document.querySelectorAll('header.topbar *, main section.view:not([hidden]) *')]
    .filter((el) => shown(el) && ownText(el))
    .map((el) => {
      const bg = background(el);
      const color = parse(getComputedStyle(el).color);
      const fg = over([color[0], color[1], color[2], color[3] * opacity(el)], bg);
      const [light, dark] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
      const ratio = Math.round(((light + 0.05) / (dark + 0.05)) * 100) / 100;
      return { text: el.tagName.toLowerCase() + '.' + [...el.classList].join('.') + ' "' + ownText(el).slice(0, 40) + '"', ratio };
    });
})()`;

const contrasts = (page: Page): Promise<Array<{ text: string; ratio: number }>> => page.evaluate(CONTRASTS);

t.test(
  'the dashboard is readable and says which zones are off and which cannot answer',
  { skip: chromiumMissing() },
  async (t) => {
    const { d, api, s } = await seededDaemon(t);
    const driver = d.driver as SimulatedDriver;
    // The office is off and can answer; the bedroom is off too, but its unit is silent.
    const bedroom = (await api.get(`/api/zones/${s.zones.Bedroom}`)).body as { output: { channel: number } };
    driver.simulateUnit([bedroom.output.channel], false, 'unit 2 does not answer');
    // The living room's amplifier pages, in do-not-disturb and party mode: its badges are measured too.
    driver.simulateKeypad(1, { paging: true, doNotDisturb: true, party: true });
    const browser = await launch(t);
    // One signed-in admin page per screen size, which both tests below use and leave as they found it.
    const pages: Record<'phone' | 'desktop', Session> = {
      phone: await signIn(browser, d.base, 'admin', d.adminPassword, PHONE),
      desktop: await signIn(browser, d.base, 'admin', d.adminPassword, DESKTOP),
    };

    for (const [size, options] of [
      ['phone', PHONE],
      ['desktop', DESKTOP],
    ] as const) {
      t.test(
        `every text meets ${AA}:1 on a ${size} (${options.colorScheme} theme), off and unavailable zones included`,
        async (t) => {
          const { page, console } = share(t, pages[size]);
          for (const view of VIEWS) {
            await page.getByRole('link', { name: view }).click();
            await page.locator(`section.view[data-view="${view.toLowerCase()}"]:not([hidden])`).waitFor();
            if (view === 'Players') await page.locator('li.zone-row.is-unavailable').waitFor();
            if (view === 'Players') await page.locator('.zone-flags').getByText('Party').waitFor();
            if (view === 'Playlists') await page.getByRole('button', { name: /^Sunday morning/ }).click();
            if (view === 'Playlists') await page.getByRole('heading', { name: 'Sunday morning' }).waitFor();
            if (view === 'Settings') await page.getByRole('heading', { name: 'Home Assistant (MQTT)' }).waitFor();
            const all = await contrasts(page);
            t.ok(all.length > 10, `${view}: ${all.length} texts measured`);
            t.same(
              all.filter((c) => c.ratio < AA),
              [],
              `${view}: none below ${AA}:1`,
            );
          }
          t.same(console.errors, []);
        },
      );
    }

    t.test('a zone that is off and one that cannot answer differ in words and mark, not only in colour', async (t) => {
      for (const size of ['phone', 'desktop'] as const) {
        const { page, console } = share(t, pages[size]);
        const row = (name: string) =>
          page.locator('li.zone-row').filter({ has: page.locator(`[aria-label="${name} volume"]`) });
        await page.locator('li.zone-row.is-unavailable').waitFor();
        /** The row's words, and the marks drawn before its status line and its reason (a mask image each). */
        const look = (name: string) =>
          row(name).evaluate((el: any) => ({
            // biome-ignore lint/performance/useDomNodeTextContent: the words as rendered (hidden parts left out) are checked
            words: el.innerText as string,
            marks: [...el.querySelectorAll('.zone-sub, .unavailable-reason')]
              .filter((part: any) => part.getClientRects().length > 0)
              .map((part: any) => getComputedStyle(part, '::before'))
              .map((mark: any) => (mark.content === 'none' ? 'none' : mark.maskImage || mark.webkitMaskImage || 'none'))
              .filter((image: string) => image !== 'none'),
          }));
        const off = await look('Office');
        const silent = await look('Bedroom');
        t.match(off.words, /Output 5 · off/, `${size}: the zone that is off says it is off`);
        t.notMatch(off.words, /Unavailable/, `${size}: and nothing else`);
        t.match(
          silent.words,
          /Unavailable: .*unit 2 does not answer/,
          `${size}: the silent one says it cannot answer, and why`,
        );
        t.equal(off.marks.length, 1, `${size}: the zone that is off has one mark`);
        t.equal(silent.marks.length, 1, `${size}: so has the silent one`);
        t.not(off.marks[0], silent.marks[0], `${size}: and the two marks differ`);
        await screenshot(page, `zones-off-and-unavailable-${size}`, size === 'desktop');
        t.same(console.errors, []);
      }
    });
  },
);
