// The playlists capability's entry: playlists and their tracks, and their export as M3U files inside the export
// directory. The rest of the daemon imports this file.
export {
  PlaylistsService,
  toM3u,
  type PlaylistLimits,
  type PlaylistSummary,
  type PlaylistView,
  type PlaylistWithWarnings,
  type TrackInput,
  type TrackView,
} from './playlists.js';
