// Playlists: readable by everyone, changed by Operators and Admins; a paged summary list, M3U export and download.

import { type PlaylistsService, toM3u } from '../domain/playlists/index.js';
import { type ApiResult, created, DOWNLOAD_HEADERS, noContent, ok, type Route, route } from '../http/route.js';
import { IdParams, T, UuidList } from '../http/schema.js';
import { pageOf, pageResult } from './paging.js';
import { Flag, Name, PlaylistSchema, PlaylistSummarySchema, QueryInteger, TrackInputSchema } from './schemas.js';

const Tracks = T.Array(TrackInputSchema, { maxItems: 1000, errorMessage: 'must be an array of at most 1000 tracks' });
const playlistMissing = { description: 'no such playlist' };
/** Tracks are kept whatever their URI (an M3U export may be for another player); stream players play only some forms. */
const PlaylistWithWarnings = T.Composite([
  PlaylistSchema,
  T.Object({
    warnings: T.Array(T.String(), {
      description:
        'one sentence per track just added that stream players cannot play (an absolute file:///… URI, another scheme), naming the ' +
        'form they play: file:<path in the music folder> (file:albums/x/01.flac) or http(s); empty when every one can',
    }),
  }),
]);

export function playlistRoutes(playlists: PlaylistsService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/playlists',
      access: 'user',
      summary: 'List playlists, a page at a time, without their tracks',
      description:
        'Items are PlaylistSummary objects in creation order. X-Total-Count gives the number of playlists; when there ' +
        'is a next page, Link gives it (rel="next"). GET /api/playlists/{id} returns a playlist with its tracks.',
      tags: ['playlists'],
      paged: true,
      query: T.Object({
        limit: QueryInteger(
          `playlists per page, 1 to the configured maximum (default ${playlists.limits.playlistPageDefault}, at most ${playlists.limits.playlistPageMax})`,
          {
            minimum: 1,
            maximum: playlists.limits.playlistPageMax,
          },
        ),
        offset: QueryInteger('how many playlists to skip (default 0)', { minimum: 0 }),
      }),
      responses: { 200: { description: 'one page of playlist summaries', schema: T.Array(PlaylistSummarySchema) } },
      handle: (req) => listPage(playlists, req.query),
    }),
    route({
      method: 'POST',
      path: '/api/playlists',
      access: 'writer',
      summary: 'Create a playlist, optionally with tracks',
      tags: ['playlists'],
      body: T.Object({ name: Name, tracks: T.Optional(Tracks) }),
      responses: {
        201: {
          description: 'created, with warnings about tracks stream players cannot play',
          schema: PlaylistWithWarnings,
        },
        409: { description: 'the playlist cap or the track cap (config limits) is reached' },
      },
      handle: (req) => created(playlists.create(req.caller, req.body)),
    }),
    route({
      method: 'GET',
      path: '/api/playlists/{id}',
      access: 'user',
      summary: 'Get a playlist with its tracks in order',
      tags: ['playlists'],
      params: IdParams,
      responses: { 200: { description: 'the playlist', schema: PlaylistSchema }, 404: playlistMissing },
      handle: (req) => ok(playlists.get(req.params.id)),
    }),
    route({
      method: 'DELETE',
      path: '/api/playlists/{id}',
      access: 'writer',
      summary: 'Delete a playlist',
      tags: ['playlists'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: playlistMissing },
      handle: (req) => {
        playlists.remove(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'POST',
      path: '/api/playlists/{id}/tracks',
      access: 'writer',
      summary: 'Append tracks (ids are generated)',
      tags: ['playlists'],
      params: IdParams,
      body: T.Object({
        tracks: T.Array(TrackInputSchema, {
          minItems: 1,
          maxItems: 1000,
          errorMessage: 'must be an array of 1 to 1000 tracks',
        }),
      }),
      responses: {
        200: {
          description: 'the playlist, with warnings about tracks stream players cannot play',
          schema: PlaylistWithWarnings,
        },
        404: playlistMissing,
        409: { description: 'the playlist would pass the track cap (config limits)' },
      },
      handle: (req) => ok(playlists.appendTracks(req.caller, req.params.id, req.body.tracks)),
    }),
    route({
      method: 'DELETE',
      path: '/api/playlists/{id}/tracks',
      access: 'writer',
      summary: 'Remove tracks by id; an id not in the playlist fails the whole request',
      tags: ['playlists'],
      params: IdParams,
      body: T.Object({ trackIds: UuidList('track ids; duplicates are ignored') }),
      responses: {
        204: { description: 'removed' },
        400: { description: 'invalid body or unknown track ids' },
        404: playlistMissing,
      },
      handle: (req) => {
        playlists.removeTracks(req.caller, req.params.id, req.body.trackIds);
        return noContent();
      },
    }),
    route({
      method: 'POST',
      path: '/api/playlists/{id}/reorder',
      access: 'writer',
      summary: 'Reorder: newOrder[i] is the current index of the track that moves to position i',
      tags: ['playlists'],
      params: IdParams,
      body: T.Object({
        newOrder: T.Array(T.Integer({ errorMessage: 'must hold integers' }), {
          maxItems: 10_000,
          errorMessage: 'must be an array of integers (a permutation of 0..n-1)',
        }),
      }),
      responses: {
        204: { description: 'reordered' },
        400: { description: 'not a permutation of 0..n-1' },
        404: playlistMissing,
      },
      handle: (req) => {
        playlists.reorder(req.caller, req.params.id, req.body.newOrder);
        return noContent();
      },
    }),
    route({
      method: 'PUT',
      path: '/api/playlists/{id}/favorite',
      access: 'writer',
      summary: 'Mark or unmark a playlist as favorite',
      tags: ['playlists'],
      params: IdParams,
      body: Flag('isFavorite'),
      responses: { 204: { description: 'stored' }, 404: playlistMissing },
      handle: (req) => {
        playlists.setFavorite(req.caller, req.params.id, req.body.isFavorite as boolean);
        return noContent();
      },
    }),
    route({
      method: 'POST',
      path: '/api/playlists/{id}/export',
      access: 'writer',
      summary: 'Write the playlist as extended M3U to a file inside the export directory',
      tags: ['playlists'],
      params: IdParams,
      body: T.Object({
        filePath: T.String({
          description: 'relative path inside the export directory ending in .m3u8 or .m3u; at most 255 bytes; no ".."',
          errorMessage: 'must be a string',
        }),
      }),
      responses: {
        204: { description: 'written' },
        400: { description: 'path not allowed (outside, a symbolic link, too long, not a regular file)' },
        404: playlistMissing,
        409: { description: 'the export directory is full (config limits), or the path changed while it was written' },
      },
      handle: async (req) => {
        await playlists.export(req.caller, req.params.id, req.body.filePath, () => req.revalidate());
        return noContent();
      },
    }),
    route({
      method: 'GET',
      path: '/api/playlists/{id}/m3u',
      access: 'user',
      summary: 'Download the playlist as an extended M3U file (the same text an export writes)',
      tags: ['playlists'],
      params: IdParams,
      responses: {
        200: {
          description: 'extended M3U in UTF-8, offered as an attachment',
          contentType: 'audio/x-mpegurl',
          schema: T.String(),
          headers: DOWNLOAD_HEADERS,
        },
        404: playlistMissing,
      },
      handle: (req): ApiResult => {
        const playlist = playlists.get(req.params.id);
        return {
          status: 200,
          raw: toM3u(playlist),
          contentType: 'audio/x-mpegurl; charset=utf-8',
          headers: { 'Content-Disposition': `attachment; filename="${downloadName(playlist.name)}.m3u8"` },
        };
      },
    }),
  ];
}

function listPage(playlists: PlaylistsService, query: URLSearchParams): ApiResult {
  const page = pageOf(query, playlists.limits.playlistPageDefault, playlists.limits.playlistPageMax);
  const { items, total } = playlists.page(page.limit, page.offset);
  return pageResult(items, page, total, (offset, limit) => `/api/playlists?offset=${offset}&limit=${limit}`);
}

/** A file name any browser and file system accepts: ASCII letters, digits and a few marks; accents dropped. */
function downloadName(name: string): string {
  const ascii = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  return ascii.replace(/[^A-Za-z0-9 ._()-]+/g, '_').replace(/^[ ._]+|[ ._]+$/g, '') || 'playlist';
}
