// Transport on the real MPD: PCM on the FIFO while playing and none while paused, positions, next/previous/seek, ends.
import t from 'tap';
import type { PlaybackEvent } from '../../drivers/playback.js';
import { concurrently } from '../helpers/concurrency.js';
import { musicFolder, startEngine, TRACKS } from '../helpers/mpd-rig.js';

concurrently(t, 3);
const music = musicFolder(t);
const file = (track: string) => `file:${track}`;
const isPosition = (e: PlaybackEvent): e is Extract<PlaybackEvent, { type: 'position' }> => e.type === 'position';

t.test('PCM arrives on the FIFO while playing, stops while paused, and comes back on resume', async (t) => {
  const rig = await startEngine(t, music);
  const reader = rig.reader();
  await rig.engine.playQueue([file(TRACKS.long)]);
  await reader.receive(176_400, 'a second of PCM while playing');
  await rig.engine.pause();
  t.equal(rig.engine.status().state, 'paused');
  await reader.drained();
  const before = rig.events.length;
  // 75 reads, at least 1.5 s: playing, that is over 260 000 bytes and a position tick.
  t.equal(await reader.during(75), 0, 'no PCM while paused');
  t.notOk(rig.events.slice(before).some(isPosition), 'no position ticks while paused');
  await rig.engine.resume();
  await reader.receive(176_400, 'PCM again after resume');
  t.equal(rig.engine.status().state, 'playing');
});

t.test('the position advances while playing, reported at most once a second', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.long)]);
  const first = await rig.next(isPosition, 'a position event');
  const from = rig.events.indexOf(first) + 1;
  await rig.next((e) => isPosition(e) && e.positionMs >= first.positionMs + 2_000, 'a position two seconds on', from);
  const ticks = rig.events.filter(isPosition);
  for (let i = 1; i < ticks.length; i++) {
    t.ok(ticks[i]!.at - ticks[i - 1]!.at >= 999, `tick ${i} comes a second after the one before`);
    t.ok(ticks[i]!.positionMs > ticks[i - 1]!.positionMs, `tick ${i} is further into the track`);
  }
  t.equal(ticks[0]!.durationMs, 30_000);
});

t.test('now-playing carries the tags MPD read from FLAC, Ogg and MP3, and none for WAV', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.b), file(TRACKS.d), file(TRACKS.c)]);
  t.match(rig.engine.status(), {
    index: 0,
    uri: file(TRACKS.a),
    title: 'Tone A',
    artist: 'Sine Band',
    album: 'Tones',
    durationMs: 3000,
  });
  await rig.engine.next();
  t.match(rig.engine.status(), { index: 1, uri: file(TRACKS.b), title: 'Tone B', artist: 'Sine Band' });
  await rig.engine.next();
  t.match(rig.engine.status(), { index: 2, title: 'Tone D', artist: 'Mp3 Band' });
  await rig.engine.next();
  t.match(rig.engine.status(), {
    index: 3,
    uri: file(TRACKS.c),
    title: null,
    artist: null,
    album: null,
    durationMs: 3000,
  });
});

t.test('next and previous move through the queue', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.long), file(TRACKS.a), file(TRACKS.b)]);
  await rig.engine.next();
  t.match(rig.engine.status(), { state: 'playing', index: 1, uri: file(TRACKS.a) });
  await rig.engine.next();
  t.match(rig.engine.status(), { state: 'playing', index: 2 });
  await rig.engine.previous();
  t.match(rig.engine.status(), { state: 'playing', index: 1 });
});

t.test('next on the last track ends the queue: stopped, with no current track', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.long)], 1);
  await rig.engine.next();
  t.match(rig.engine.status(), { state: 'stopped', index: null, uri: null, title: null });
});

t.test('a queue plays to its end, one track after the other, and stops', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.b)]);
  await rig.until((s) => s.index === 1, 'the second track');
  await rig.until((s) => s.state === 'stopped', 'the end of the queue');
  t.match(rig.engine.status(), { index: null, queueLength: 2 });
  const indexes = rig.events.flatMap((e) => (e.type === 'playback' ? [e.status.index] : []));
  t.same(indexes, [0, 1, null], 'each track played, then nothing');
  t.notOk(
    rig.events.some((e) => e.type === 'skipped'),
    'nothing was skipped',
  );
});

t.test('seek moves within the track, and a position past its end is refused', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.long)]);
  await rig.engine.seek(20_000);
  const status = rig.engine.status();
  t.ok(status.positionMs >= 20_000 && status.positionMs < 30_000, `position ${status.positionMs} is 20 s in`);
  await t.rejects(rig.engine.seek(31_000), { code: 'bad-request', message: /30000 ms long/ });
  await t.rejects(rig.engine.seek(-1), { code: 'bad-request' });
});

t.test('playing from an index and at a position starts there', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.long)], 1, 12_000);
  const status = rig.engine.status();
  t.match(status, { state: 'playing', index: 1, uri: file(TRACKS.long) });
  t.ok(status.positionMs >= 12_000, `position ${status.positionMs} is 12 s in`);
  await rig.engine.play(0);
  t.match(rig.engine.status(), { index: 0, uri: file(TRACKS.a) });
});

t.test('stop keeps the current track, and resume plays it again from its start', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.a), file(TRACKS.long)], 1, 5_000);
  await rig.engine.stopPlayback();
  t.match(rig.engine.status(), { state: 'stopped', index: 1, uri: file(TRACKS.long) });
  await rig.engine.resume();
  const status = rig.engine.status();
  t.match(status, { state: 'playing', index: 1 });
  t.ok(status.positionMs < 5_000, 'from the start of the track');
});

t.test('an index outside the queue is refused and changes nothing', async (t) => {
  const rig = await startEngine(t, music);
  await rig.engine.playQueue([file(TRACKS.long)]);
  await t.rejects(rig.engine.play(1), { code: 'bad-request', message: /from 0 to 0, got 1/ });
  await t.rejects(rig.engine.playQueue([file(TRACKS.a)], 2), { code: 'bad-request' });
  await t.rejects(rig.engine.playQueue([]), { code: 'bad-request', message: /at least one URI/ });
  t.match(rig.engine.status(), { state: 'playing', index: 0, uri: file(TRACKS.long) });
});

t.test('the output volume stays at 100%: MPD has no mixer to turn down', async (t) => {
  const rig = await startEngine(t, music);
  const { MpdConnection } = await import('../../drivers/mpd/connection.js');
  const { systemClock } = await import('../../drivers/mpd/engine.js');
  const connection = await MpdConnection.connect(`${rig.stateDir}/players/player-1/socket`, {
    clock: systemClock,
    timeoutMs: 10_000,
  });
  t.teardown(() => connection.close());
  await t.rejects(connection.request(['setvol 50']), { name: 'MpdAck' });
  const [status = []] = await connection.request(['status']);
  t.notOk(
    status.some(([key, value]) => key === 'volume' && value !== '-1' && value !== '100'),
    'no volume below 100',
  );
});
