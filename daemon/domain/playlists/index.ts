// The playlists capability's entry: playlists and their tracks, and their export as M3U files inside the export
// directory. The rest of the daemon imports this file.
export {
  type PlaylistLimits,
  type PlaylistSummary,
  PlaylistsService,
  type PlaylistView,
  type PlaylistWithWarnings,
  type TrackInput,
  type TrackView,
  toM3u,
} from './playlists.js';
