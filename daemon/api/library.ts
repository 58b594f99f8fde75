// The music folder as the stream players read it: one folder a page at a time, with tags (to build playlists from),
// and a rescan after files were added or changed.

import { LIBRARY_PAGE_MAX, type Library } from '../domain/playback/index.js';
import { type Route, route } from '../http/route.js';
import { T } from '../http/schema.js';
import { pageOf, pageResult } from './paging.js';
import { QueryInteger } from './schemas.js';

/** Entries per page when the client names no limit. */
const PAGE_DEFAULT = 100;

const Text = T.Union([T.String(), T.Null()]);
export const LibraryEntrySchema = T.Object(
  {
    kind: T.Union([T.Literal('folder'), T.Literal('track')]),
    uri: T.String({
      description: "a track's file: URI (what a playlist's track stores), or a folder's path to list next",
    }),
    name: T.String({ description: 'the last segment of the path' }),
    title: Text,
    artist: Text,
    album: Text,
    durationMs: T.Union([T.Integer({ minimum: 0 }), T.Null()]),
  },
  { title: 'LibraryEntry' },
);

const noEngine = {
  description:
    'there is no stream player to read the library with, or its MPD cannot run (not installed, or it could not start: the problem says why)',
};

export function libraryRoutes(library: Library): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/library',
      access: 'user',
      summary: 'List a folder of the music library: folders first, then tracks with their tags, a page at a time',
      description:
        'X-Total-Count gives the entries of the whole folder; when there is a next page, Link gives it (rel="next"). A track\'s uri is what ' +
        "POST /api/playlists/{id}/tracks takes; a folder's uri is the folder parameter that lists it.",
      tags: ['library'],
      paged: true,
      query: T.Object({
        folder: T.Optional(
          T.String({
            maxLength: 4096,
            description: 'a folder inside the music folder, e.g. albums/Blue Train (default: the top)',
          }),
        ),
        limit: QueryInteger(`entries per page, 1 to ${LIBRARY_PAGE_MAX} (default ${PAGE_DEFAULT})`, {
          minimum: 1,
          maximum: LIBRARY_PAGE_MAX,
        }),
        offset: QueryInteger('how many entries to skip (default 0)', { minimum: 0 }),
      }),
      responses: {
        200: { description: 'one page of the folder', schema: T.Array(LibraryEntrySchema) },
        404: { description: 'no such folder in the music folder (or not scanned yet: rescan)' },
        409: noEngine,
        503: {
          description:
            "no stream player's MPD is up yet (it starts, or scans the music folder the first time); retry after Retry-After seconds",
        },
      },
      handle: async (req) => {
        const page = pageOf(req.query, PAGE_DEFAULT, LIBRARY_PAGE_MAX);
        const folder = req.query.get('folder') ?? '';
        const listed = await library.list(folder, page);
        const next = (offset: number, limit: number) =>
          `/api/library?folder=${encodeURIComponent(listed.folder)}&offset=${offset}&limit=${limit}`;
        return pageResult(listed.entries, page, listed.total, next);
      },
    }),
    route({
      method: 'POST',
      path: '/api/library/rescan',
      access: 'writer',
      summary:
        'Rescan the music folder (files added, changed or removed); library.scanChanged events say when it began and ended',
      description:
        "For Admins, and for Operators assigned a stream player. One rescan runs at a time, each stream player's MPD in turn: one asked " +
        'while one runs joins it (202, nothing more is queued), and a new one may start a minute after the last began (429 before, with Retry-After).',
      tags: ['library'],
      responses: {
        202: { description: 'the rescan began, or one already runs', schema: T.Object({ scanning: T.Boolean() }) },
        403: { description: 'a Viewer, or an Operator assigned no stream player' },
        409: noEngine,
        429: { description: 'the last rescan began less than a minute ago; Retry-After says when the next may start' },
        503: { description: "no stream player's MPD is up yet" },
      },
      handle: (req) => ({ status: 202, body: library.rescan(req.caller) }),
    }),
  ];
}
