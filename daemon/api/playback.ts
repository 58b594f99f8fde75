// Stream players' transport and now-playing: what a player plays, play a playlist (from a track) or a URI, pause,
// resume, stop, next, previous and seek. Each answers with the playback after the command.

import type { PlayRequest, Transport } from '../domain/playback/index.js';
import { PlaybackSchema } from '../domain/shared/index.js';
import { ok, type Route, route } from '../http/route.js';
import { ExactlyOneOf, IdParams, T, Uuid } from '../http/schema.js';
import { notFoundDoc } from './audio-bodies.js';

const Position = T.Integer({
  minimum: 0,
  maximum: 86_400_000,
  description: 'milliseconds from the start of the track',
  errorMessage: 'must be a whole number of milliseconds from 0 to 86400000',
});

const PlayBody = ExactlyOneOf(
  T.Object(
    {
      playlistId: T.Optional(Uuid('the playlist to play')),
      trackId: T.Optional(Uuid('with playlistId: the track to start from (default: the first)')),
      positionMs: T.Optional({ ...Position, description: 'with playlistId: where in that track to start' }),
      uri: T.Optional(
        T.String({
          minLength: 1,
          maxLength: 2048,
          description: 'a track to play on its own: file:<path in the music folder> or an http(s) stream URL',
          errorMessage: 'must be a string of 1 to 2048 characters',
        }),
      ),
    },
    { description: 'exactly one of playlistId (with trackId and positionMs if wanted) and uri' },
  ),
  ['playlistId', 'uri'],
  {
    none: 'send "playlistId" (a playlist to play) or "uri" (one track)',
    several: 'send "playlistId" or "uri", not both',
  },
);

const playbackDoc = { description: 'the playback once the player took the command', schema: PlaybackSchema };
const stateConflict = {
  description:
    'not a stream player, an announcement plays on it, an empty playlist, nothing to seek in, or its MPD cannot run (not installed, or it could not start: the problem says why)',
};
const restarting = { description: "the player's MPD restarts; retry after Retry-After seconds" };
const transportResponses = { 200: playbackDoc, 404: notFoundDoc, 409: stateConflict, 503: restarting };

/** The commands without a body: each is the engine's command of the same name. */
const COMMANDS = [
  ['pause', 'Pause'],
  ['resume', 'Go on from a pause; when stopped, play the current track from its start'],
  ['stop', 'Stop (the current track stays current)'],
  ['next', 'Play the next track (after the last one, playback stops)'],
  ['previous', 'Play the previous track'],
] as const;

export function playbackRoutes(transport: Transport): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/players/{id}/playback',
      access: 'user',
      summary: "A stream player's playback: state, playlist and track, title, artist, album, duration and position",
      tags: ['playback'],
      params: IdParams,
      responses: {
        200: { description: 'the playback', schema: PlaybackSchema },
        404: notFoundDoc,
        409: { description: 'not a stream player' },
      },
      handle: (req) => ok(transport.get(req.caller, req.params.id)),
    }),
    route({
      method: 'POST',
      path: '/api/players/{id}/play',
      access: 'writer',
      summary: 'Play a playlist (from one of its tracks, at a position) or one URI',
      description:
        "The queue becomes the playlist's tracks; tracks the appliance cannot play (another scheme, a path outside the music folder) are " +
        'left out and reported by player.trackSkipped events (400 when it is the track asked for, or all of them). A file that is missing ' +
        'or a stream that cannot be reached is skipped when its turn comes. Editing the playlist later changes what plays next.',
      tags: ['playback'],
      params: IdParams,
      body: PlayBody,
      responses: {
        ...transportResponses,
        400: { description: 'invalid body, a trackId not in the playlist, or tracks the appliance cannot play' },
        404: { description: 'no such player (or not in your assignments) or playlist' },
      },
      handle: (req) =>
        transport.play(req.caller, req.params.id, playRequest(req.body), () => req.revalidate()).then(ok),
    }),
    ...COMMANDS.map(([command, summary]) =>
      route({
        method: 'POST',
        path: `/api/players/{id}/${command}`,
        access: 'writer',
        summary,
        tags: ['playback'],
        params: IdParams,
        responses: transportResponses,
        handle: (req) => transport[command](req.caller, req.params.id, () => req.revalidate()).then(ok),
      }),
    ),
    route({
      method: 'POST',
      path: '/api/players/{id}/seek',
      access: 'writer',
      summary: 'Move within the current track',
      tags: ['playback'],
      params: IdParams,
      body: T.Object({ positionMs: Position }),
      responses: {
        ...transportResponses,
        400: { description: 'invalid body, or a position past the end of the track' },
      },
      handle: (req) => transport.seek(req.caller, req.params.id, req.body.positionMs, () => req.revalidate()).then(ok),
    }),
  ];
}

/** The request the body means (the schema let exactly one of playlistId and uri through). */
function playRequest(body: { playlistId?: string; trackId?: string; positionMs?: number; uri?: string }): PlayRequest {
  if (body.uri !== undefined) return { uri: body.uri };
  return {
    playlistId: body.playlistId!,
    ...(body.trackId !== undefined ? { trackId: body.trackId } : {}),
    ...(body.positionMs !== undefined ? { positionMs: body.positionMs } : {}),
  };
}
