// Files outside the music folder do not play through a symlink swapped in after a track was accepted: the path is
// checked again when the track is queued, and a swap after that is refused by the kernel when MPD opens the file
// (each mpd runs under Landlock, allowed to read beneath the music folder only).

import { rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { musicFolder, TRACKS, tone } from '../helpers/mpd-rig.js';
import { playlistOf, startStreamDaemon } from '../helpers/stream-rig.js';

/** A 20-second tone outside the music folder, removed after the test. */
function outsideTone(t: Test): string {
  const dir = tempDir('azc-outside-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'private.flac');
  tone(file, 20, 200, { title: 'Private' });
  return file;
}

/** Replaces a file of the music folder by a symlink to `target`. */
function swapForSymlink(music: string, track: string, target: string): void {
  rmSync(path.join(music, track));
  symlinkSync(target, path.join(music, track));
}

t.test(
  'a track swapped for a symlink that leads outside after it was added to a playlist is refused when played',
  async (t) => {
    const music = musicFolder(t);
    const rig = await startStreamDaemon(t, { music });
    const player = await rig.fifoPlayer('Kitchen', 1);
    player.reader();
    const list = await playlistOf(rig.api, 'Swapped', [`file:${TRACKS.a}`, `file:${TRACKS.long}`]);
    swapForSymlink(music, TRACKS.a, outsideTone(t));
    const from = rig.events.length;
    const played = await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
    t.match(played.body, { state: 'playing', trackId: list.trackIds[1], title: 'Long Tone' });
    const skip = await rig.next('player.trackSkipped', (e) => e.payload.trackId === list.trackIds[0], from);
    t.match(skip.payload, { reason: 'refused', detail: /leads outside the music folder/ });
  },
);

t.test(
  'a queued track swapped for a symlink that leads outside while the track before it plays is skipped, and nothing of the outside file plays',
  async (t) => {
    const music = musicFolder(t);
    const rig = await startStreamDaemon(t, { music });
    const player = await rig.fifoPlayer('Kitchen', 1);
    player.reader();
    const list = await playlistOf(rig.api, 'Swapped later', [
      `file:${TRACKS.long}`,
      `file:${TRACKS.a}`,
      `file:${TRACKS.b}`,
    ]);
    const played = await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
    t.match(played.body, { state: 'playing', trackId: list.trackIds[0], title: 'Long Tone' });
    // MPD holds the whole queue now. It opens a track ahead of its turn only once the one before is decoded, and the
    // long one fills its buffer for seconds: Tone A is swapped before MPD opened it, and reached with next.
    swapForSymlink(music, TRACKS.a, outsideTone(t));
    const from = rig.events.length;
    await rig.api.post(`/api/players/${player.id}/next`);
    // Without the confinement MPD opens the outside tone and plays it under the swapped track's entry and tags.
    const skipped = () =>
      rig.events.slice(from).find((e) => e.type === 'player.trackSkipped' && e.payload.trackId === list.trackIds[1]);
    const seen = await rig.until(
      player.id,
      (playback) => skipped() !== undefined || (playback.trackId === list.trackIds[1] && playback.positionMs > 1000),
      'the swapped track to be skipped or to play',
    );
    const skip = skipped();
    t.ok(skip, `the swapped track is skipped, not played (the player was at ${seen.trackId} ${seen.positionMs} ms)`);
    t.match(
      skip?.payload,
      { detail: /Failed to open .*a\.flac.*Permission denied/ },
      'the skip says MPD could not open the file',
    );
    const after = await rig.until(
      player.id,
      (playback) => playback.trackId === list.trackIds[2],
      'Tone B to play after the skipped track',
    );
    t.match(after, { state: 'playing', title: 'Tone B' });
  },
);
