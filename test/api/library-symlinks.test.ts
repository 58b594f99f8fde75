// Files outside the music folder do not play through a symlink swapped in after a track was accepted: the path is
// checked again when the track is queued. (A swap after it was queued is the limit docs/security.md names: MPD
// follows symlinks when it opens a file.)
import t, { type Test } from 'tap';
import { rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/daemon.js';
import { musicFolder, tone, TRACKS } from '../helpers/mpd-rig.js';
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

t.test('a track swapped for a symlink that leads outside after it was added to a playlist is refused when played', async (t) => {
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
});
