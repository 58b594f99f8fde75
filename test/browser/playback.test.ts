// Stream players in the dashboard, in Debian chromium against a real daemon whose players are real MPDs writing to
// FIFOs the test reads (sox tones): the now-playing card and its buttons, Play on a playlist, the library browser,
// the announcement form, and a viewer's card without buttons.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { createUser } from '../helpers/inject.js';
import { musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { playlistOf, startStreamDaemon } from '../helpers/stream-rig.js';
import { WAIT_MS } from '../helpers/wait-for.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { eventually, PHONE, signIn, unlabelled } from './session.js';

// A page global used inside waitForFunction() callbacks: the project compiles without the DOM lib.
declare const document: any;

const music = musicFolder(t);
const file = (track: string) => `file:${track}`;
/** One more than the dashboard's library page (50), so the folder takes two pages. */
const MANY = 51;
mkdirSync(path.join(music, 'many'));
for (let i = 0; i < MANY; i++)
  copyFileSync(path.join(music, TRACKS.c), path.join(music, 'many', `${String(i).padStart(2, '0')}.wav`));

t.test('stream players in the dashboard', { skip: chromiumMissing() }, async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const lounge = await rig.fifoPlayer('Lounge stream', 1);
  lounge.reader();
  const kitchen = await rig.fifoPlayer('Kitchen stream', 2);
  kitchen.reader();
  const zones = (await api.get('/api/zones')).body as Array<{ id: string; name: string }>;
  await api.post(`/api/players/${lounge.id}/attach-zones`, { zoneIds: [zones[0]!.id] });
  const long = await playlistOf(api, 'Long', [file(TRACKS.long)]);
  const tones = await playlistOf(api, 'Tones', [file(TRACKS.a), file(TRACKS.b)]);
  const browser = await launch(t);
  const admin = await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword);
  const page = admin.page;
  const card = (id: string) => `.player-card[data-key="${id}"]`;
  const position = (id: string) =>
    page.evaluate((selector) => document.querySelector(`${selector} .np-bar`).value as number, card(id));

  t.test('the card shows the title from the track tags and its position advances while it plays', async (t) => {
    t.equal((await api.post(`/api/players/${lounge.id}/play`, { playlistId: long.id })).status, 200);
    await page.locator(`${card(lounge.id)} .np-title`, { hasText: 'Long Tone' }).waitFor({ timeout: WAIT_MS });
    t.equal(await page.locator(`${card(lounge.id)} .badge`).textContent(), 'Playing');
    await page.waitForFunction((selector) => document.querySelector(`${selector} .np-bar`).value > 0, card(lounge.id), {
      timeout: WAIT_MS,
    });
    const first = await position(lounge.id);
    await page.waitForFunction(
      ([selector, from]) => document.querySelector(`${selector} .np-bar`).value > from,
      [card(lounge.id), first] as const,
      { timeout: WAIT_MS },
    );
    t.ok((await position(lounge.id)) > first, 'the bar moved on with the position events');
    t.equal(
      await page
        .locator(`${card(lounge.id)} .np-time`)
        .last()
        .textContent(),
      '0:30',
      'the length of the track',
    );
    t.same(await unlabelled(page), [], 'every transport control has a name');
    await screenshot(page, 'now-playing-desktop');
  });

  t.test('the pause button pauses the real player, and play goes on', async (t) => {
    await page.getByRole('button', { name: 'Pause Lounge stream' }).click();
    await rig.until(lounge.id, (playback) => playback.state === 'paused', 'the player to pause');
    await page.locator(`${card(lounge.id)} .badge`, { hasText: 'Paused' }).waitFor({ timeout: WAIT_MS });
    await page.getByRole('button', { name: 'Play Lounge stream' }).click();
    await rig.until(lounge.id, (playback) => playback.state === 'playing', 'the player to play again');
    await page.getByRole('button', { name: 'Pause Lounge stream' }).click();
    const paused = await rig.until(lounge.id, (playback) => playback.state === 'paused', 'the player to pause again');
    t.equal(paused.playlistId, long.id, 'the same playlist stays current');
  });

  t.test('a click on the bar moves within the track to that point', async (t) => {
    const bar = page.locator(`${card(lounge.id)} .np-bar`);
    const box = (await bar.boundingBox())!;
    await bar.click({ position: { x: box.width * 0.75, y: box.height / 2 } });
    const moved = await rig.until(
      lounge.id,
      (playback) => playback.positionMs >= 20_000,
      'the position to move three quarters in',
    );
    t.ok(moved.positionMs <= 25_000, `at ${moved.positionMs} ms of 30000`);
    await page.waitForFunction(
      (selector) => document.querySelector(`${selector} .np-bar`).value >= 20_000,
      card(lounge.id),
      { timeout: WAIT_MS },
    );
  });

  t.test('a viewer sees the card, paused on its track, without a button', async (t) => {
    const viewer = await createUser(api, 'victor', 'Viewer', { playerIds: [lounge.id], zoneIds: [zones[0]!.id] });
    const session = await signIn(browser, rig.d.base, 'victor', viewer.password);
    const viewerPage = session.page;
    await viewerPage.locator(`${card(lounge.id)} .np-title`, { hasText: 'Long Tone' }).waitFor({ timeout: WAIT_MS });
    t.equal(await viewerPage.locator(`${card(lounge.id)} .badge`).textContent(), 'Paused');
    t.equal(await viewerPage.locator(`${card(lounge.id)} .now-playing button`).count(), 0, 'no transport button');
    t.equal(await viewerPage.getByRole('button', { name: 'Announce' }).count(), 0, 'no announcement');
    await viewerPage.getByRole('link', { name: 'Playlists' }).click();
    await viewerPage.getByRole('button', { name: /^Tones/ }).click();
    await viewerPage.getByRole('heading', { name: 'Tones' }).waitFor();
    t.equal(await viewerPage.getByRole('button', { name: 'Play Tones' }).count(), 0, 'no Play on a playlist');
    t.equal(await viewerPage.getByText('Add from the music library').count(), 0, 'no library to add from');
    t.same(session.console.errors, []);
    await viewerPage.context().close();
  });

  t.test('on a phone the card fits the screen and its buttons are whole', async (t) => {
    const phone = await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword, PHONE);
    const phonePage = phone.page;
    await phonePage.locator(`${card(lounge.id)} .np-title`, { hasText: 'Long Tone' }).waitFor({ timeout: WAIT_MS });
    const fits = await phonePage.evaluate(
      () => document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth,
    );
    t.ok(fits, 'nothing is wider than the screen');
    for (const name of [
      'Previous track on Lounge stream',
      'Play Lounge stream',
      'Stop on Lounge stream',
      'Next track on Lounge stream',
    ]) {
      t.ok(await phonePage.getByRole('button', { name }).isVisible(), `${name} shows`);
    }
    await screenshot(phonePage, 'now-playing-phone', false);
    t.same(phone.console.errors, []);
    await phonePage.context().close();
  });

  t.test('Play on a playlist plays it on the player chosen, and only there', async (t) => {
    await page.getByRole('link', { name: 'Playlists' }).click();
    await page.getByRole('button', { name: /^Tones/ }).click();
    await page.getByRole('button', { name: 'Play Tones' }).click();
    const dialog = page.getByRole('dialog', { name: 'Play Tones' });
    await dialog.getByLabel('On the player').selectOption({ label: 'Kitchen stream' });
    await dialog.getByRole('button', { name: 'Play' }).click();
    await page.getByRole('status').getByText('Tones plays on Kitchen stream.').waitFor();
    const playing = await rig.until(
      kitchen.id,
      (playback) => playback.playlistId === tones.id,
      'the kitchen player to take the playlist',
    );
    t.equal(playing.title, 'Tone A', 'from its first track');
    t.equal(
      (await api.get(`/api/players/${lounge.id}/playback`)).body.playlistId,
      long.id,
      'the other player keeps its own',
    );
  });

  t.test('Play can start the playlist from a track chosen in the dialog', async (t) => {
    await page.getByRole('button', { name: 'Play Tones' }).click();
    const dialog = page.getByRole('dialog', { name: 'Play Tones' });
    await dialog.getByLabel('On the player').selectOption({ label: 'Kitchen stream' });
    const [first, second] = (await api.get(`/api/playlists/${tones.id}`)).body.tracks as Array<{
      id: string;
      title: string;
    }>;
    const from = dialog.getByLabel('From the track');
    t.equal(await from.inputValue(), first!.id, 'the first track unless another is chosen');
    t.same(
      await from.locator('option').allTextContents(),
      [`1. ${first!.title}`, `2. ${second!.title}`],
      'each track by its place and title',
    );
    await from.selectOption(second!.id);
    await dialog.getByRole('button', { name: 'Play' }).click();
    await page.getByRole('status').getByText(`Tones plays on Kitchen stream from ${second!.title}.`).waitFor();
    const playing = await rig.until(
      kitchen.id,
      (playback) => playback.playlistId === tones.id && playback.title === 'Tone B',
      'the kitchen player to play Tone B',
    );
    t.equal(playing.index, 1, 'the second track of the playlist');
  });

  t.test('a track that cannot play is reported as it is skipped', async (t) => {
    const gone = await playlistOf(api, 'Gone', [file('tones/gone.flac'), file(TRACKS.a)]);
    t.equal((await api.post(`/api/players/${kitchen.id}/play`, { playlistId: gone.id })).status, 200);
    await page
      .getByRole('status')
      .getByText(/^Kitchen stream skipped file:tones\/gone\.flac: \S/)
      .waitFor({ timeout: WAIT_MS });
    const next = await rig.until(kitchen.id, (playback) => playback.title === 'Tone A', 'the next track to play');
    t.equal(next.playlistId, gone.id, 'the queue went on');
  });

  t.test('the library browser walks into a folder and adds a track to the open playlist', async (t) => {
    await page.getByText('Add from the music library').click();
    await page.getByRole('button', { name: 'tones', exact: true }).click();
    const add = page.getByRole('button', { name: 'Add Tone D to the playlist' });
    await add.waitFor();
    t.match(
      await page.locator('.lib-track', { has: add }).textContent(),
      /Tone D.*Mp3 Band.*0:03/,
      'the tags and the length are shown',
    );
    await add.click();
    await eventually(
      async () => (await api.get(`/api/playlists/${tones.id}`)).body.tracks.length === 3,
      'the track to be added',
    );
    const listed = (await api.get('/api/library?folder=tones')).body.find(
      (entry: { uri: string }) => entry.uri === file(TRACKS.d),
    );
    t.match(
      (await api.get(`/api/playlists/${tones.id}`)).body.tracks[2],
      { title: 'Tone D', uri: file(TRACKS.d), durationMs: listed.durationMs },
      'with the length the library gave',
    );
    await page.getByRole('button', { name: 'Music', exact: true }).click();
    await page.getByRole('button', { name: 'many', exact: true }).click();
    const more = page.getByRole('button', { name: 'Show more' });
    await more.waitFor();
    t.equal(await page.locator('.lib-track').count(), 50, 'a big folder comes a page at a time');
    await more.click();
    await page
      .locator('.lib-track')
      .nth(MANY - 1)
      .waitFor();
    t.equal(await page.locator('.lib-track').count(), MANY, 'the next page follows it');
    t.ok(await more.isHidden(), 'and there is no more');
    t.same(admin.console.errors, []);
  });

  t.test(
    'the announcement form refuses a sound it cannot play in words, then plays one and follows it to the end',
    async (t) => {
      admin.console.allow(/status of 400 \(Bad Request\)/);
      await page.getByRole('link', { name: 'Players' }).click();
      await page.getByRole('button', { name: 'Announce' }).click();
      const dialog = page.getByRole('dialog', { name: 'Announce' });
      await dialog.getByLabel('Sound (URI)').fill('ftp://example.invalid/chime.flac');
      await dialog.getByLabel(zones[0]!.name, { exact: true }).check();
      await dialog.getByLabel(zones[1]!.name, { exact: true }).check();
      await dialog.getByLabel('Volume (%)').fill('30');
      await dialog.getByRole('button', { name: 'Announce' }).click();
      const refusal = dialog.getByRole('alert');
      await refusal.waitFor();
      t.match(await refusal.textContent(), /\S/, 'the problem is shown in the dialog, which stays open');

      await dialog.getByLabel('Sound (URI)').fill(file(TRACKS.a));
      const answer = page.waitForResponse(
        (res) => res.url().endsWith('/api/announcements') && res.request().method() === 'POST',
      );
      await dialog.getByRole('button', { name: 'Announce' }).click();
      const queued = await (await answer).json();
      t.equal(queued.status, 'queued');
      await page.locator('.announce-status[data-status="done"]').waitFor({ timeout: WAIT_MS });
      t.equal(
        await page.locator('.announce-status').textContent(),
        'Announcement on 2 zones played; everything is back.',
      );
      t.equal((await api.get(`/api/announcements/${queued.id}`)).body.status, 'done', 'as the API says');
      t.same(admin.console.errors, []);
    },
  );

  t.test('the New player dialog makes a stream player, and says in words what a FIFO player lacks', async (t) => {
    admin.console.allow(/status of 400 \(Bad Request\)/);
    const fifo = path.join(tempDir('azc-ui-fifo-'), 'den.pcm');
    t.teardown(() => rmSync(path.dirname(fifo), { recursive: true, force: true }));
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const before = (await api.get('/api/players')).body.length as number;
    await page.getByRole('link', { name: 'Players' }).click();
    await page.getByRole('button', { name: 'New player' }).click();
    const dialog = page.getByRole('dialog', { name: 'New player' });
    await dialog.getByLabel('Name').fill('Den stream');
    await dialog.getByLabel('Amplifier input').selectOption('3');
    await dialog
      .getByLabel('What plays into it')
      .selectOption({ label: 'This appliance, into a FIFO (for another program)' });
    await dialog.getByRole('button', { name: 'Create player' }).click();
    const refusal = dialog.getByRole('alert');
    await refusal.waitFor();
    t.match(await refusal.textContent(), /path/i, 'a FIFO player without its path is refused, and the dialog says why');
    t.equal((await api.get('/api/players')).body.length, before, 'and nothing was made');

    await dialog.getByLabel('ALSA device or FIFO path').fill(fifo);
    await dialog.getByRole('button', { name: 'Create player' }).click();
    await page.getByRole('heading', { name: 'Den stream', exact: true }).waitFor();
    const den = (
      (await api.get('/api/players')).body as Array<{
        id: string;
        name: string;
        input: { channel: number };
        output: unknown;
      }>
    ).find((p) => p.name === 'Den stream');
    t.match(
      den,
      { input: { channel: 3 }, output: { kind: 'fifo', path: fifo } },
      'a stream player on input 3, playing into the FIFO',
    );
    await rig.until(den!.id, (playback) => playback.engine.state === 'up', "the new player's MPD to be up");
    await page.getByRole('button', { name: 'Play Den stream' }).waitFor();
    t.same(admin.console.errors, []);
  });
});
