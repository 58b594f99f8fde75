// Playlists and input devices: readable by everyone, changed by Operators and Admins.
import { T, IdParams, UuidList } from '../http/schema.js';
import { route, ok, created, noContent, type Route } from '../http/route.js';
import type { PlaylistsService } from '../domain/playlists.js';
import type { InputsService } from '../domain/inputs.js';
import { Flag, InputDeviceSchema, Name, PlaylistSchema, TrackInputSchema } from './schemas.js';

const Tracks = T.Array(TrackInputSchema, { maxItems: 1000, errorMessage: 'must be an array of at most 1000 tracks' });
const playlistMissing = { description: 'no such playlist' };

export function playlistRoutes(playlists: PlaylistsService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/playlists',
      access: 'user',
      summary: 'List playlists',
      tags: ['playlists'],
      responses: { 200: { description: 'playlists', schema: T.Array(PlaylistSchema) } },
      handle: () => ok(playlists.list()),
    }),
    route({
      method: 'POST',
      path: '/api/playlists',
      access: 'writer',
      summary: 'Create a playlist, optionally with tracks',
      tags: ['playlists'],
      body: T.Object({ name: Name, tracks: T.Optional(Tracks) }),
      responses: { 201: { description: 'created', schema: PlaylistSchema } },
      handle: (req) => created(playlists.create(req.body)),
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
        playlists.remove(req.params.id);
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
      body: T.Object({ tracks: T.Array(TrackInputSchema, { minItems: 1, maxItems: 1000, errorMessage: 'must be an array of 1 to 1000 tracks' }) }),
      responses: { 200: { description: 'the playlist', schema: PlaylistSchema }, 404: playlistMissing },
      handle: (req) => ok(playlists.appendTracks(req.params.id, req.body.tracks)),
    }),
    route({
      method: 'DELETE',
      path: '/api/playlists/{id}/tracks',
      access: 'writer',
      summary: 'Remove tracks by id; an id not in the playlist fails the whole request',
      tags: ['playlists'],
      params: IdParams,
      body: T.Object({ trackIds: UuidList('track ids; duplicates are ignored') }),
      responses: { 204: { description: 'removed' }, 400: { description: 'invalid body or unknown track ids' }, 404: playlistMissing },
      handle: (req) => {
        playlists.removeTracks(req.params.id, req.body.trackIds);
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
      responses: { 204: { description: 'reordered' }, 400: { description: 'not a permutation of 0..n-1' }, 404: playlistMissing },
      handle: (req) => {
        playlists.reorder(req.params.id, req.body.newOrder);
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
        playlists.setFavorite(req.params.id, req.body.isFavorite as boolean);
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
      responses: { 204: { description: 'written' }, 400: { description: 'path not allowed' }, 404: playlistMissing },
      handle: async (req) => {
        await playlists.export(req.params.id, req.body.filePath);
        return noContent();
      },
    }),
  ];
}

export function inputRoutes(inputs: InputsService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/input-devices',
      access: 'user',
      summary: 'List input devices',
      tags: ['input devices'],
      responses: { 200: { description: 'input devices', schema: T.Array(InputDeviceSchema) } },
      handle: () => ok(inputs.list()),
    }),
    route({
      method: 'POST',
      path: '/api/input-devices',
      access: 'admin',
      summary: 'Create an input device on an amplifier input that has none',
      tags: ['input devices'],
      body: T.Object({
        name: Name,
        kind: T.Optional(T.String({ minLength: 1, maxLength: 40, errorMessage: 'must be a string of 1 to 40 characters' })),
        input: T.Object({ driver: T.Optional(T.String()), channel: T.Integer({ minimum: 1, maximum: 99, errorMessage: 'must be an integer channel number' }) }),
      }),
      responses: { 201: { description: 'created', schema: InputDeviceSchema }, 409: { description: 'input already described' } },
      handle: (req) => created(inputs.create(req.body)),
    }),
    route({
      method: 'GET',
      path: '/api/input-devices/{id}',
      access: 'user',
      summary: 'Get an input device',
      tags: ['input devices'],
      params: IdParams,
      responses: { 200: { description: 'the input device', schema: InputDeviceSchema }, 404: { description: 'no such input device' } },
      handle: (req) => ok(inputs.get(req.params.id)),
    }),
    route({
      method: 'DELETE',
      path: '/api/input-devices/{id}',
      access: 'admin',
      summary: 'Delete an input device (not recreated from the amplifier on restart)',
      tags: ['input devices'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'no such input device' } },
      handle: (req) => {
        inputs.remove(req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'PUT',
      path: '/api/input-devices/{id}/favorite',
      access: 'writer',
      summary: 'Mark or unmark an input device as favorite',
      tags: ['input devices'],
      params: IdParams,
      body: Flag('isFavorite'),
      responses: { 204: { description: 'stored' }, 404: { description: 'no such input device' } },
      handle: (req) => {
        inputs.setFavorite(req.params.id, req.body.isFavorite as boolean);
        return noContent();
      },
    }),
  ];
}
