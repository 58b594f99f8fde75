// The dashboard with a stream player, in Debian chromium against a real daemon whose player is a real MPD, at a
// 1280×800 desktop and a 390×844 phone: the library path names every folder and goes up one, no view is wider than
// the screen, a message naming a long address wraps inside its strip, and the seek bar moves the track from the
// keyboard and spans its row on a phone with both times beside it.

import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { playlistOf, startStreamDaemon } from '../helpers/stream-rig.js';
import { WAIT_MS } from '../helpers/wait-for.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { PHONE, type Session, share, signIn } from './session.js';

// Page globals used inside evaluate() callbacks: the project compiles without the DOM lib.
declare const document: any;
declare const getComputedStyle: (el: any) => any;

const DESKTOP = { viewport: { width: 1280, height: 800 } };
const SIZES = [
  ['phone', PHONE],
  ['desktop', DESKTOP],
] as const;
const VIEWS = ['Players', 'Playlists', 'Inputs', 'Users', 'Settings'] as const;
/** A radio stream's address as people paste it: long, with nothing to break a line at. */
const LONG_URI = `https://radio.example.invalid/streams/${'night-programme-'.repeat(6)}192k.mp3?listener=0123456789abcdef0123456789abcdef`;
const ALBUMS = 'albums';
/** A long folder name, as box sets have, and a file name with no space to break at. */
const BOX_SET = 'The Complete Studio Recordings 1969-1979 (Remastered Deluxe Edition)';
const LONG_FILE = 'an_extremely_long_file_name_without_a_single_space_to_break_at_1969.wav';

const music = musicFolder(t);
mkdirSync(path.join(music, ALBUMS, BOX_SET), { recursive: true });
copyFileSync(path.join(music, TRACKS.c), path.join(music, ALBUMS, BOX_SET, LONG_FILE));

/** The library path as a person reads it: the crumbs' words in order. */
const crumbs = (page: Page) => page.locator('.lib-crumbs').evaluate((nav: any) => nav.textContent as string);

/**
 * What sticks out of the screen sideways: the page's scroll width, and every card or control past an edge. Measured
 * against the width the test set, not innerWidth: a phone's browser zooms out to show a page wider than the screen.
 */
const overflow = (page: Page) =>
  page.evaluate((width) => {
    const out = [
      ...document.querySelectorAll('main .card, main input, main select, main button, main summary, .tabs .tab'),
    ]
      .filter((el: any) => el.getClientRects().length > 0)
      .filter((el: any) => el.getBoundingClientRect().right > width + 0.5 || el.getBoundingClientRect().left < -0.5)
      .map(
        (el: any) =>
          `${el.tagName.toLowerCase()} "${(el.getAttribute('aria-label') ?? el.textContent).trim().slice(0, 40)}" from ${Math.round(el.getBoundingClientRect().left)} to ${Math.round(el.getBoundingClientRect().right)}`,
      );
    return { scrollWidth: document.documentElement.scrollWidth, width, out };
  }, page.viewportSize()!.width);

/** Whether an element shows all of its text: nothing cut off or ellipsised, and not squeezed to nothing. */
const whole = (page: Page, selector: string) =>
  page.locator(selector).evaluate((el: any) => el.clientWidth > 0 && el.scrollWidth <= el.clientWidth);

/** Goes to a view by its tab; the Playlists view opens Sunday morning with its library two folders deep. */
async function openView(page: Page, name: (typeof VIEWS)[number]) {
  await page.getByRole('link', { name }).click();
  await page.locator(`section.view[data-view="${name.toLowerCase()}"]:not([hidden])`).waitFor();
  if (name === 'Playlists') {
    await page.getByRole('button', { name: /^Sunday morning/ }).click();
    await page.getByRole('heading', { name: 'Sunday morning' }).waitFor();
    await page.getByText('Add from the music library').click();
    await page.locator('.lib-folder', { hasText: ALBUMS }).click();
    await page.locator('.lib-folder', { hasText: BOX_SET }).click();
    await page.getByRole('button', { name: /^Add an_extremely_long/ }).waitFor();
    await page.getByText('Save a copy on the appliance').click();
  }
  if (name === 'Settings') await page.getByRole('heading', { name: 'Home Assistant (MQTT)' }).waitFor();
}

t.test('the dashboard with a stream player, on a phone and a desktop', { skip: chromiumMissing() }, async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const lounge = await rig.fifoPlayer('Lounge stream', 1);
  lounge.reader();
  const long = await playlistOf(api, 'Long', [`file:${TRACKS.long}`]);
  await playlistOf(api, 'Sunday morning', [`file:${TRACKS.a}`, LONG_URI]);
  const browser = await launch(t);
  // One signed-in admin page per screen size for the tests below that check independent things: each leaves it as
  // it found it. The message test keeps a page of its own, loaded with messages that stay.
  const pages: Record<(typeof SIZES)[number][0], Session> = {
    desktop: await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword, DESKTOP),
    phone: await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword, PHONE),
  };

  /** Opens the playlist and its library panel. */
  async function openLibrary(t: Test, session: Session) {
    const shared = share(t, session);
    const page = shared.page;
    await page.getByRole('link', { name: 'Playlists' }).click();
    await page.getByRole('button', { name: /^Long/ }).click();
    await page.getByRole('heading', { name: 'Long' }).waitFor();
    await page.getByText('Add from the music library').click();
    await page.getByRole('button', { name: ALBUMS, exact: true }).waitFor();
    return shared;
  }

  t.test(
    'the path names each folder two deep, the last one current, and Up goes back one folder at a time',
    async (t) => {
      const { page, console } = await openLibrary(t, pages.desktop);
      const up = page.getByRole('button', { name: 'Up one folder' });
      t.ok(await up.isDisabled(), 'at the top of the library there is nothing above');
      await page.getByRole('button', { name: ALBUMS, exact: true }).click();
      await page.getByRole('button', { name: BOX_SET, exact: true }).click();
      await page.getByRole('button', { name: /^Add an_extremely_long/ }).waitFor();
      t.equal(await crumbs(page), `Music/${ALBUMS}/${BOX_SET}`, 'the path reads as the folder names');
      const path = page.getByRole('navigation', { name: 'Library folder' });
      t.same(
        await path.getByRole('button').allTextContents(),
        ['Music', ALBUMS, BOX_SET],
        'each folder of the path is a button',
      );
      t.equal(await path.locator('[aria-current="location"]').textContent(), BOX_SET, 'the last is the folder shown');

      await up.click();
      await page.getByRole('button', { name: BOX_SET, exact: true }).and(page.locator('.lib-folder')).waitFor();
      t.equal(await crumbs(page), `Music/${ALBUMS}`, 'Up shows the folder above');
      await up.click();
      await page.locator('.lib-folder', { hasText: ALBUMS }).waitFor();
      t.equal(await crumbs(page), 'Music', 'and again the top of the library');
      t.ok(await up.isDisabled(), 'where Up stops');

      await page.getByRole('button', { name: ALBUMS, exact: true }).click();
      await page.getByRole('button', { name: BOX_SET, exact: true }).click();
      await path.getByRole('button', { name: ALBUMS, exact: true }).click();
      await page.locator('.lib-folder', { hasText: BOX_SET }).waitFor();
      t.equal(await crumbs(page), `Music/${ALBUMS}`, 'a folder of the path goes back to it');
      t.same(console.errors, []);
    },
  );

  for (const [size] of SIZES) {
    t.test(`on a ${size} no view is wider than the screen, the library open two folders deep included`, async (t) => {
      const { page, console } = share(t, pages[size]);
      for (const view of VIEWS) {
        await openView(page, view);
        const { scrollWidth, width, out } = await overflow(page);
        t.ok(scrollWidth <= width, `${view}: the page is ${scrollWidth} px wide on a ${width} px screen`);
        t.same(out, [], `${view}: every card and control ends inside the screen`);
        t.ok(await page.getByRole('link', { name: 'Settings' }).isVisible(), `${view}: the Settings tab shows`);
        if (view === 'Playlists') t.ok(await whole(page, '#h-playlist-detail'), "the open playlist's name is whole");
        await screenshot(page, `fit-${size}-${view.toLowerCase()}`, false);
      }
      t.same(console.errors, []);
    });
  }

  t.test('on a phone a message naming a long address wraps inside its strip', async (t) => {
    const { page, console } = await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword, PHONE, {
      path: '/?toastMs=600000',
    });
    const gone = await playlistOf(api, 'Gone', [`file:tones/${'missing_'.repeat(8)}track.flac`, `file:${TRACKS.a}`]);
    t.equal((await api.post(`/api/players/${lounge.id}/play`, { playlistId: gone.id })).status, 200);
    const message = page.locator('#toasts .toast', { hasText: 'Lounge stream skipped file:tones/missing_' });
    await message.waitFor({ timeout: WAIT_MS });
    const fit = await message.evaluate((el: any) => {
      const strip = el.parentElement.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      const text = el.querySelector('.toast-text');
      return {
        left: box.left,
        right: box.right,
        stripLeft: strip.left,
        stripRight: strip.right,
        wraps: text.scrollWidth <= text.clientWidth,
        wrap: getComputedStyle(text).overflowWrap,
      };
    });
    const width = page.viewportSize()!.width;
    t.ok(
      fit.left >= fit.stripLeft - 0.5 && fit.right <= fit.stripRight + 0.5,
      `the message (${Math.round(fit.left)}–${Math.round(fit.right)} px) is inside its strip (${Math.round(fit.stripLeft)}–${Math.round(fit.stripRight)} px)`,
    );
    t.ok(fit.right <= width, `and inside the ${width} px screen`);
    t.ok(fit.wraps, 'the address breaks onto more lines instead of running past the edge');
    t.equal(fit.wrap, 'anywhere', 'long words may break anywhere');
    await screenshot(page, 'toast-long-uri-phone', false);
    t.same(console.errors, []);
    await page.context().close();
    await api.post(`/api/players/${lounge.id}/stop`);
  });

  /** Plays the long track from its start and pauses it; resolves with the paused playback. */
  async function pauseOnLong(t: Test) {
    t.equal((await api.post(`/api/players/${lounge.id}/play`, { playlistId: long.id })).status, 200);
    // Paused only once the length is known: MPD learns it from the decoder, and a pause that comes first (seen under
    // a CPU hog) leaves a paused track whose length the daemon does not know yet.
    await rig.until(
      lounge.id,
      (playback) => playback.state === 'playing' && playback.durationMs !== null,
      'the track to play with its length known',
    );
    t.equal((await api.post(`/api/players/${lounge.id}/pause`)).status, 200);
    return rig.until(lounge.id, (playback) => playback.state === 'paused', 'the player to pause');
  }

  t.test('the seek bar moves the track from the keyboard and says where it is', async (t) => {
    const paused = await pauseOnLong(t);
    const { page, console } = share(t, pages.desktop);
    // The page has been open all along: the keys move the bar from where it stands once it shows the pause.
    await page.getByRole('button', { name: 'Play Lounge stream' }).waitFor();
    const seek = page.getByRole('slider', { name: 'Lounge stream track position' });
    await seek.waitFor();
    t.match(
      await seek.getAttribute('aria-valuetext'),
      /^\d+:\d\d of 0:30$/,
      'its value in words is the position and the length',
    );
    await seek.focus();
    await seek.press('ArrowRight');
    const moved = await rig.until(
      lounge.id,
      (playback) => playback.positionMs >= paused.positionMs + 4_000,
      'the position to move on',
    );
    t.ok(
      moved.positionMs <= paused.positionMs + 6_000,
      `ArrowRight moved it five seconds on, from ${paused.positionMs} to ${moved.positionMs} ms`,
    );
    await page.waitForFunction((from) => document.querySelector('.np-bar').value >= from, paused.positionMs + 4_000, {
      timeout: WAIT_MS,
    });
    await seek.press('ArrowLeft');
    await rig.until(
      lounge.id,
      (playback) => playback.positionMs < moved.positionMs - 4_000,
      'the position to move back',
    );
    t.same(console.errors, []);
  });

  t.test('on a phone the seek bar spans its row between the two times', async (t) => {
    await pauseOnLong(t);
    const { page, console } = share(t, pages.phone);
    const seek = page.getByRole('slider', { name: 'Lounge stream track position' });
    await seek.waitFor();
    const times = page.locator('.player-card .np-time');
    await times.last().filter({ hasText: '0:30' }).waitFor();
    t.ok(await times.first().isVisible(), 'the elapsed time shows');
    t.ok(await times.last().isVisible(), 'and the length');
    const bar = (await seek.boundingBox())!;
    const row = (await page.locator('.player-card .now-playing').boundingBox())!;
    t.ok(bar.width >= row.width / 2, `the bar is ${Math.round(bar.width)} px of the ${Math.round(row.width)} px panel`);
    await screenshot(page, 'seek-bar-phone', false);
    t.same(console.errors, []);
  });
});
