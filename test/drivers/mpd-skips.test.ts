// Tracks that cannot play on the real MPD: each is passed over with an event saying why, and the queue goes on.

import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { PlaybackEvent } from '../../drivers/playback.js';
import { concurrently } from '../helpers/concurrency.js';
import { musicFolder, radioStation, startEngine, TRACKS, tone } from '../helpers/mpd-rig.js';
import { WAIT_MS, waitFor } from '../helpers/wait-for.js';

concurrently(t, 3);
const music = musicFolder(t);
writeFileSync(path.join(music, 'tones/garbage.flac'), 'this is no FLAC stream\n'.repeat(100));
const file = (track: string) => `file:${track}`;
type Skipped = Extract<PlaybackEvent, { type: 'skipped' }>;
const isSkip = (e: PlaybackEvent): e is Skipped => e.type === 'skipped';

/**
 * An engine playing from the first entry of `queue`, whose files `names` (made in `folder` of the music folder, so
 * MPD knows them) were removed after the queue was loaded, stopped: MPD opens the next track as soon as the one
 * before it is decoded, long before its turn, and a file it has opened plays to its end even once removed.
 */
async function removedOnceQueued(t: Test, folder: string, names: string[], queue: (gone: string[]) => string[]) {
  const own = path.join(music, folder);
  names.forEach((name, i) => tone(path.join(own, name), 1, 300 + 10 * i));
  t.teardown(() => rmSync(own, { recursive: true, force: true }));
  const rig = await startEngine(t, music);
  await rig.engine.restore({
    queue: queue(names.map((name) => `file:${folder}/${name}`)),
    index: 0,
    positionMs: 0,
    state: 'stopped',
  });
  for (const name of names) rmSync(path.join(own, name));
  await rig.engine.play(0);
  return rig;
}

t.test('a missing file is skipped as missing and the next track plays', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), 'file:tones/not-there.flac', file(TRACKS.b)]);
  const skip = await rig.next(isSkip, 'the skip');
  t.match(skip, { index: 1, uri: 'file:tones/not-there.flac', reason: 'missing', detail: /no such file/ });
  await rig.until((s) => s.index === 2 && s.state === 'playing', 'the track after it');
});

t.test('an unreachable stream is skipped as unreachable and the next track plays', async (t) => {
  const radio = await radioStation(t, path.join(music, TRACKS.b), 'Nobody');
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), radio.unreachable, file(TRACKS.b)]);
  const skip = await rig.next(isSkip, 'the skip');
  t.match(skip, { index: 1, uri: radio.unreachable, reason: 'unreachable', detail: /connect/i });
  await rig.until((s) => s.index === 2 && s.state === 'playing', 'the track after it');
});

t.test('a file no decoder understands is skipped as an unknown format', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file('tones/garbage.flac'), file(TRACKS.b)]);
  const skip = await rig.next(isSkip, 'the skip');
  t.match(skip, { index: 0, uri: 'file:tones/garbage.flac', reason: 'unknown-format' });
  await rig.until((s) => s.index === 1 && s.state === 'playing', 'the track after it');
});

t.test('a file removed after it was queued is skipped as missing when its turn comes, once', async (t) => {
  const rig = await removedOnceQueued(t, 'removed', ['soon-gone.flac'], ([gone]) => [
    file(TRACKS.a),
    gone!,
    file(TRACKS.b),
  ]);
  const skip = await rig.next(isSkip, 'the skip');
  t.match(skip, { index: 1, uri: 'file:removed/soon-gone.flac', reason: 'missing', detail: /No such file/ });
  await rig.until((s) => s.index === 2 && s.state === 'playing', 'the track after it');
  t.equal(rig.events.filter(isSkip).length, 1, 'reported once');
});

t.test(
  'a track MPD fails to open ahead of its turn is not reported before the track before it has ended',
  async (t) => {
    const radio = await radioStation(t, path.join(music, TRACKS.b), 'Nobody');
    const own = path.join(music, 'ahead');
    tone(path.join(own, 'six-seconds.flac'), 6, 350);
    t.teardown(() => rmSync(own, { recursive: true, force: true }));
    const said: string[] = [];
    const rig = await startEngine(t, music, { log: (_level, msg) => said.push(msg) });
    await rig.engine.playQueue(['file:ahead/six-seconds.flac', radio.unreachable, file(TRACKS.b)]);
    // MPD opens the next track as soon as the current one is decoded, seconds before its turn; its log says it failed.
    await waitFor(() => said.some((msg) => msg.includes(radio.unreachable)), WAIT_MS, {
      what: 'MPD to try the stream ahead of its turn',
    });
    await rig.engine.pause();
    // On a failure the engine's events and MPD's last words say what it saw (seen once under a CPU hog).
    t.notOk(rig.events.some(isSkip), 'nothing reported while the track before it is paused', {
      events: rig.events,
      said: said.slice(-20),
    });
    await rig.engine.resume();
    const skip = await rig.next(isSkip, 'the skip');
    t.match(skip, { index: 1, uri: radio.unreachable, reason: 'unreachable' });
    await rig.until((s) => s.index === 2 && s.state === 'playing', 'the track after it');
    t.equal(rig.events.filter(isSkip).length, 1, 'reported once');
  },
);

t.test('tracks that fail one after the other are each reported once, with their own reason, in order', async (t) => {
  const queue = ([one, two]: string[]) => [file(TRACKS.c), one!, file('tones/garbage.flac'), two!, file(TRACKS.b)];
  const rig = await removedOnceQueued(t, 'gone-in-a-row', ['gone-1.flac', 'gone-2.flac'], queue);
  await rig.until((s) => s.index === 4 && s.state === 'playing', 'the track after them');
  t.same(
    rig.events.filter(isSkip).map((e) => [e.index, e.reason]),
    [
      [1, 'missing'],
      [2, 'unknown-format'],
      [3, 'missing'],
    ],
  );
});

t.test('after a seek, a track that cannot play is still skipped and the queue goes on', async (t) => {
  // The first track is the 30 s one, so it is still playing when the seek comes however busy the machine is; the seek
  // takes it to its last two seconds.
  const rig = await removedOnceQueued(t, 'gone-after-seek', ['gone.flac'], ([gone]) => [
    file(TRACKS.long),
    gone!,
    file(TRACKS.b),
  ]);
  // MPD stops at a track that fails after a seek, where it would otherwise go on by itself.
  await rig.engine.seek(28_000);
  const skip = await rig.next(isSkip, 'the skip');
  t.match(skip, { index: 1, reason: 'missing' });
  await rig.until((s) => s.index === 2 && s.state === 'playing', 'the track after it');
  t.equal(rig.events.filter(isSkip).length, 1, 'reported once');
});

t.test(
  'a paused snapshot whose stream is unreachable comes back paused on the next track, the stream reported',
  async (t) => {
    const radio = await radioStation(t, path.join(music, TRACKS.b), 'Nobody');
    const rig = await startEngine(t, music);
    await rig.engine.restore({ queue: [radio.unreachable, file(TRACKS.a)], index: 0, positionMs: 0, state: 'paused' });
    const skip = await rig.next(isSkip, 'the skip');
    t.match(skip, { index: 0, uri: radio.unreachable, reason: 'unreachable' });
    await rig.until((s) => s.index === 1 && s.state === 'paused', 'the next track, paused');
    t.equal(rig.events.filter(isSkip).length, 1, 'reported once');
  },
);

t.test('jumping to a track that cannot play skips it and plays the next one', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.long), 'file:nope.flac', file(TRACKS.b)]);
  await rig.engine.play(1);
  t.match(rig.events.filter(isSkip), [{ index: 1, reason: 'missing' }]);
  t.match(rig.engine.status(), { state: 'playing', index: 2 });
});

t.test('a queue of tracks that all fail ends at once, each one reported', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue(['file:gone-1.flac', file('tones/garbage.flac'), 'file:gone-2.flac']);
  await rig.until((s) => s.state === 'stopped' && s.index === null, 'the end of the queue');
  await rig.next((e) => isSkip(e) && e.index === 2, 'the last skip');
  t.match(
    rig.events.filter(isSkip).map((e) => [e.index, e.reason]),
    [
      [0, 'missing'],
      [1, 'unknown-format'],
      [2, 'missing'],
    ],
  );
});

t.test('files put in the music folder after the engine started play without a rescan', async (t) => {
  const rig = await startEngine(t, music);
  const own = path.join(music, 'new-album');
  t.teardown(() => rmSync(own, { recursive: true, force: true }));
  t.teardown(() => rmSync(path.join(music, 'top-new.flac'), { force: true }));
  // Written under another name and renamed, as a copy would land: MPD never sees half a file.
  tone(path.join(own, 'fresh.tmp.flac'), 3, 500, { title: 'Fresh' });
  renameSync(path.join(own, 'fresh.tmp.flac'), path.join(own, 'fresh.flac'));
  tone(path.join(music, 'top-new.tmp.flac'), 3, 520, { title: 'Top' });
  renameSync(path.join(music, 'top-new.tmp.flac'), path.join(music, 'top-new.flac'));
  await rig.engine.playQueue(['file:new-album/fresh.flac', 'file:top-new.flac']);
  t.match(rig.engine.status(), { state: 'playing', index: 0, title: 'Fresh', queueLength: 2 });
  await rig.engine.next();
  t.match(rig.engine.status(), { state: 'playing', index: 1, title: 'Top' });
  t.notOk(rig.events.some(isSkip), 'nothing skipped');
});
