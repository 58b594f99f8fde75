// Tracks no stream player can play, said in the answer that added them: they are kept (an M3U export or another streamer may play them).
import { parseTrackUri } from '../../../drivers/playback.js';
import type { TrackInput } from './playlists.js';

/**
 * One warning per track whose URI stream players refuse (an absolute `file:///…`, another scheme, a stream from a
 * place `streamHosts` and the usual ports do not allow), naming the form they play.
 */
export function unplayableTracks(tracks: readonly TrackInput[], streamHosts: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const track of tracks) {
    try {
      parseTrackUri(track.uri, streamHosts);
    } catch (err) {
      warnings.push(
        `track "${track.title}" cannot play on stream players: ${(err as Error).message}; it is kept for M3U exports and other players`,
      );
    }
  }
  return warnings;
}
