// Radio, queue edits while playing, snapshot/restore and a killed MPD, on the real MPD.

import { execFileSync } from 'node:child_process';
import { cpSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { PlaybackEvent } from '../../drivers/playback.js';
import { concurrently } from '../helpers/concurrency.js';
import { tempDir } from '../helpers/daemon.js';
import { musicFolder, radioStation, SOX, startEngine, TRACKS } from '../helpers/mpd-rig.js';

concurrently(t, 3);
const music = musicFolder(t);
const file = (track: string) => `file:${track}`;
const isEngine = (e: PlaybackEvent): e is Extract<PlaybackEvent, { type: 'engine' }> => e.type === 'engine';
const near = (actual: number, expected: number) => Math.abs(actual - expected) <= 1_000;

t.test('a radio stream served on loopback plays and reports its name', async (t) => {
  const ogg = path.join(tempDir('azc-radio-'), 'radio.ogg');
  t.teardown(() => rmSync(path.dirname(ogg), { recursive: true, force: true }));
  execFileSync(SOX, ['-n', '-r', '44100', '-c', '2', ogg, 'synth', '20', 'sine', '480'], { stdio: 'pipe' });
  const radio = await radioStation(t, ogg, 'Loopback Radio');
  const rig = await startEngine(t, music);
  const reader = rig.reader();
  await rig.engine.playUri(radio.url);
  await rig.until((s) => s.name === 'Loopback Radio', 'the stream name');
  await reader.receive(176_400, 'a second of the stream as PCM');
  t.match(rig.engine.status(), { state: 'playing', index: 0, uri: radio.url, durationMs: null });
  t.equal(radio.listeners(), 1);
  await t.rejects(rig.engine.seek(1_000), { code: 'bad-request', message: /no duration/ });
});

t.test('replacing the queue while a track plays keeps it playing and changes what comes next', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.b)]);
  const playing = rig.engine.status();
  await rig.engine.replaceQueue([file(TRACKS.d), file(TRACKS.a), file(TRACKS.c)], { current: 1 });
  const after = rig.engine.status();
  t.match(after, { state: 'playing', index: 1, uri: file(TRACKS.a), queueLength: 3 });
  t.ok(after.positionMs >= playing.positionMs, 'the track went on: no restart');
  await rig.until((s) => s.index === 2, 'the track that now follows');
  t.equal(rig.engine.status().uri, file(TRACKS.c), 'the new next track, not the old one');
});

t.test('a playing track left out of the new queue plays to its end, then the given next entry plays', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.b)]);
  await rig.engine.replaceQueue([file(TRACKS.c), file(TRACKS.d)], { next: 1 });
  t.match(rig.engine.status(), { state: 'playing', index: null, uri: file(TRACKS.a), title: 'Tone A', queueLength: 2 });
  await rig.until((s) => s.index === 1, 'the given next entry');
  t.equal(rig.engine.status().uri, file(TRACKS.d));
  await rig.engine.previous();
  t.match(rig.engine.status(), { index: 0, uri: file(TRACKS.c) }, 'the left-out track is gone from the queue');
});

t.test('a snapshot restored after playing something else returns to the same track, position and state', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.long)], 1, 10_000);
  const saved = await rig.engine.snapshot();
  t.match(saved, { queue: [file(TRACKS.a), file(TRACKS.long)], index: 1, state: 'playing' });
  await rig.engine.playUri(file(TRACKS.b));
  t.match(rig.engine.status(), { index: 0, uri: file(TRACKS.b) });
  await rig.engine.restore(saved);
  const back = rig.engine.status();
  t.match(back, { state: 'playing', index: 1, uri: file(TRACKS.long), queueLength: 2 });
  t.ok(
    near(back.positionMs, saved.positionMs),
    `position ${back.positionMs} is within a second of ${saved.positionMs}`,
  );
});

t.test('a paused snapshot comes back paused at its position', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.long)], 0, 15_000);
  await rig.engine.pause();
  const saved = await rig.engine.snapshot();
  await rig.engine.playUri(file(TRACKS.a));
  await rig.engine.restore(saved);
  const back = rig.engine.status();
  t.match(back, { state: 'paused', index: 0 });
  t.ok(
    near(back.positionMs, saved.positionMs),
    `position ${back.positionMs} is within a second of ${saved.positionMs}`,
  );
});

t.test('a stopped snapshot comes back stopped on its track, and resume plays that track', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.long)], 1);
  await rig.engine.stopPlayback();
  const saved = await rig.engine.snapshot();
  t.match(saved, { index: 1, state: 'stopped' });
  await rig.engine.playUri(file(TRACKS.b));
  await rig.engine.restore(saved);
  t.match(rig.engine.status(), { state: 'stopped', index: 1, uri: file(TRACKS.long) });
  await rig.engine.resume();
  t.match(rig.engine.status(), { state: 'playing', index: 1, uri: file(TRACKS.long) });
});

t.test('a snapshot that is not one is refused and changes nothing', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.long)]);
  await t.rejects(rig.engine.restore({ queue: [file(TRACKS.a)], index: 3, positionMs: 0, state: 'playing' }), {
    code: 'bad-request',
  });
  await t.rejects(
    rig.engine.restore({ queue: [file(TRACKS.a)], index: 0, positionMs: 0, state: 'loud' as 'playing' }),
    { code: 'bad-request' },
  );
  t.match(rig.engine.status(), { state: 'playing', uri: file(TRACKS.long) });
});

t.test('an MPD killed while playing is restarted and its playback restored near where it was', async (t) => {
  const rig = await startEngine(t, music, { timing: { restartFirstMs: 200 } });
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.long)], 1, 8_000);
  const before = rig.engine.status();
  const pid = rig.engine.pid!;
  process.kill(pid, 'SIGKILL');
  const down = await rig.next((e) => isEngine(e) && !e.up, 'the engine down');
  t.match(down, { detail: /killed by SIGKILL/ });
  const from = rig.events.indexOf(down);
  const up = await rig.next((e) => isEngine(e) && e.up, 'the engine up again', from);
  t.match(up, { recovery: 'restored' });
  t.not(rig.engine.pid, pid, 'a new mpd');
  const back = rig.engine.status();
  t.match(back, { state: 'playing', index: 1, uri: file(TRACKS.long) });
  t.ok(back.positionMs >= before.positionMs, `position ${back.positionMs} is not before ${before.positionMs}`);
  const reader = rig.reader();
  await reader.receive(176_400, 'PCM from the new mpd');
});

t.test('an MPD killed when its music folder is gone comes back with the playback reported lost', async (t) => {
  const own = tempDir('azc-music-copy-');
  t.teardown(() => rmSync(own, { recursive: true, force: true }));
  cpSync(music, own, { recursive: true });
  const rig = await startEngine(t, own, { timing: { restartFirstMs: 200 } });
  await rig.engine.playQueue([file(TRACKS.long)]);
  renameSync(own, `${own}-moved`);
  t.teardown(() => rmSync(`${own}-moved`, { recursive: true, force: true }));
  process.kill(rig.engine.pid!, 'SIGKILL');
  const up = await rig.next((e) => isEngine(e) && e.up && e.recovery !== 'fresh', 'the engine up again');
  t.match(up, { recovery: 'lost', detail: /music folder/ });
  t.match(rig.engine.status(), { state: 'stopped', queueLength: 0, index: null });
});
