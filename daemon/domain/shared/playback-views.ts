// The JSON shapes of a stream player's playback and of an announcement, as schemas: the API and the events carry them.
import { type Static, Type as T } from '@sinclair/typebox';
import { RECEIVER_KIND_NAMES } from '../../../drivers/index.js';

const Id = T.String({ format: 'uuid' });
const Text = T.Union([T.String(), T.Null()]);

export const ENGINE_STATES = ['starting', 'up', 'restarting', 'failed', 'missing', 'stopped'] as const;

/** The MPD that plays a stream player: whether it runs, and why not. */
export const EngineSchema = T.Object(
  {
    state: T.Union(
      ENGINE_STATES.map((state) => T.Literal(state)),
      {
        description:
          'starting (its first scan of the music folder included), up, restarting (it exited and is started again with back-off), ' +
          'failed (it could not start: detail says why; the next transport command tries again), missing (MPD is not installed), stopped',
      },
    ),
    detail: T.Union([T.String(), T.Null()], {
      description: 'why it is not up, or the last fault of an output that could not open; null when all is well',
    }),
  },
  { title: 'Engine' },
);

export const PlaybackSchema = T.Object(
  {
    playerId: Id,
    engine: EngineSchema,
    source: T.Union(
      [T.Literal('mpd'), ...RECEIVER_KIND_NAMES.map((kind) => T.Literal(kind)), T.Literal('announcement')],
      {
        description:
          "what holds the player's output and what the other fields describe: its playlist engine (mpd), a cast through one of its receivers, or an announcement. During a cast, title, artist and album are the sender's and the queue fields are empty",
      },
    ),
    state: T.Union([T.Literal('playing'), T.Literal('paused'), T.Literal('stopped')]),
    playlistId: T.Union([Id, T.Null()], {
      description: 'the playlist being played (null: a URI played on its own, or nothing)',
    }),
    trackId: T.Union([Id, T.Null()], { description: "the current track's id in that playlist" }),
    index: T.Union([T.Integer({ minimum: 0 }), T.Null()], {
      description: 'position of the current track in the queue (tracks the appliance cannot play are left out of it)',
    }),
    queueLength: T.Integer({ minimum: 0 }),
    uri: Text,
    title: Text,
    artist: Text,
    album: Text,
    artwork: T.Union([T.String(), T.Null()], {
      description:
        'during a cast whose sender gave cover art: where to get it, GET /api/players/{id}/artwork?v=<version> (the version changes with the image); null otherwise',
    }),
    name: T.Union([T.String(), T.Null()], { description: "a radio stream's name (icy-name)" }),
    durationMs: T.Union([T.Integer({ minimum: 0 }), T.Null()], { description: 'null for a stream without an end' }),
    positionMs: T.Integer({ minimum: 0 }),
    positionAt: T.String({
      format: 'date-time',
      description: 'when positionMs was read: while playing, the position now is positionMs plus the time since then',
    }),
    announcementId: T.Union([Id, T.Null()], {
      description: 'the announcement this player is playing; transport commands wait for it (409)',
    }),
  },
  { title: 'Playback' },
);

export const SKIP_REASONS = ['missing', 'unreachable', 'unknown-format', 'refused', 'other'] as const;

/** A zone an announcement left as it was, or did not put back, and why. */
const ZoneReason = T.Object({ zoneId: Id, reason: T.String() });

export const ANNOUNCEMENT_STATUSES = ['queued', 'playing', 'done', 'failed', 'cancelled'] as const;

export const AnnouncementSchema = T.Object(
  {
    id: Id,
    uri: T.String(),
    zoneIds: T.Array(Id, { description: 'the zones asked for' }),
    volume: T.Number({
      minimum: 0,
      maximum: 1,
      format: 'double',
      description: 'the volume asked for; each zone plays it within its own limit',
    }),
    playerIds: T.Array(Id, { description: 'the stream players that play it (one per amplifier), once it started' }),
    status: T.Union(ANNOUNCEMENT_STATUSES.map((status) => T.Literal(status))),
    detail: T.Union([T.String(), T.Null()], {
      description: 'why it failed or was cancelled, or what could not be put back',
    }),
    skipped: T.Array(ZoneReason, {
      description: 'zones it did not play on: they cannot answer, or no stream player feeds their amplifier',
    }),
    kept: T.Array(ZoneReason, {
      description:
        'zones not put back afterwards because someone changed them while it played (the newer change wins), or they were deleted',
    }),
    createdAt: T.String({ format: 'date-time' }),
    startedAt: T.Union([T.String({ format: 'date-time' }), T.Null()]),
    endedAt: T.Union([T.String({ format: 'date-time' }), T.Null()]),
  },
  { title: 'Announcement' },
);

export type PlaybackView = Static<typeof PlaybackSchema>;
export type EngineView = Static<typeof EngineSchema>;
export type EngineState = EngineView['state'];
export type TrackSkipReason = (typeof SKIP_REASONS)[number];
export type AnnouncementView = Static<typeof AnnouncementSchema>;
export type AnnouncementStatus = AnnouncementView['status'];
