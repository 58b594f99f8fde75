// Response and shared request schemas, used for validation and for the OpenAPI document.

import { QUERY_INTEGER } from '../http/openapi.js';
import { T, Uuid } from '../http/schema.js';

export const RoleSchema = T.String({
  description: 'Admin, Operator or Viewer (requests accept any letter case; responses use exactly these)',
  examples: ['Operator'],
});

export const AssignmentsSchema = T.Object({
  playerIds: T.Array(Uuid(), { maxItems: 256, description: 'players this user may see and control' }),
  zoneIds: T.Array(Uuid(), { maxItems: 256, description: 'zones this user may see and control' }),
});

export const UserSchema = T.Object({
  id: T.String({ format: 'uuid' }),
  username: T.String(),
  role: T.Union([T.Literal('Admin'), T.Literal('Operator'), T.Literal('Viewer')]),
  apiKey: T.String({ description: 'masked: svc_ + first 4 hex + … + last 4; empty when the key was revoked' }),
  isEnabled: T.Boolean(),
  createdAt: T.String({ format: 'date-time' }),
  assignments: AssignmentsSchema,
  passwordChangeRequired: T.Boolean({
    description:
      'true while the account has the generated password of the first start; sign-in clients should ask for a new one',
  }),
});

export const ApiKeySchema = T.Object({ apiKey: T.String({ pattern: '^svc_[0-9a-f]{48}$' }) });

export { InputDeviceSchema, PlayerSchema, ZoneSchema } from '../domain/shared/index.js';

export const TrackSchema = T.Object({
  id: T.String({ format: 'uuid' }),
  title: T.String(),
  uri: T.String(),
  durationMs: T.Union([T.Integer(), T.Null()]),
});

export const PlaylistSchema = T.Object({
  id: T.String({ format: 'uuid' }),
  name: T.String(),
  isFavorite: T.Boolean(),
  tracks: T.Array(TrackSchema),
  createdAt: T.String({ format: 'date-time' }),
});

export const PlaylistSummarySchema = T.Object(
  {
    id: T.String({ format: 'uuid' }),
    name: T.String(),
    isFavorite: T.Boolean(),
    trackCount: T.Integer({ minimum: 0 }),
    durationMs: T.Integer({ minimum: 0, description: 'the sum of the known track durations' }),
    createdAt: T.String({ format: 'date-time' }),
  },
  {
    title: 'PlaylistSummary',
    description: 'a playlist in the list: its size instead of its tracks (GET /api/playlists/{id} has them)',
  },
);

/**
 * A query parameter holding a whole number; the range is checked by the handler, which knows the configured limits,
 * and given here for the OpenAPI document, which shows the parameter as an integer with these bounds.
 */
export const QueryInteger = (description: string, bounds: { minimum: number; maximum?: number }) =>
  T.Optional(
    T.String({
      pattern: '^[0-9]{1,9}$',
      description,
      errorMessage: 'must be a whole number of at most 9 digits',
      [QUERY_INTEGER]: { maximum: 999_999_999, ...bounds },
    }),
  );

/** A name a person gives (player, zone, input device, playlist): no control characters or bidi overrides. */
export const Name = T.String({
  minLength: 1,
  maxLength: 100,
  format: 'name',
  errorMessage: 'must be a string of 1 to 100 characters',
});

export const TrackInputSchema = T.Object({
  title: T.String({
    minLength: 1,
    maxLength: 500,
    format: 'name',
    errorMessage: 'must be a string of 1 to 500 characters',
  }),
  uri: T.String({
    minLength: 1,
    maxLength: 2048,
    format: 'name',
    errorMessage: 'must be a string of 1 to 2048 characters',
  }),
  durationMs: T.Optional(
    T.Integer({
      minimum: 0,
      maximum: 86_400_000,
      errorMessage: 'must be an integer number of milliseconds from 0 to 86400000',
    }),
  ),
});

export const ProblemSchema = T.Object({
  type: T.String(),
  title: T.String(),
  status: T.Integer({ format: 'int32' }),
  detail: T.String(),
  instance: T.String(),
  requestId: T.String(),
  errors: T.Optional(T.Record(T.String(), T.Array(T.String()))),
});

/** Zones a multi-zone write (all off, a scene) left as they were because they cannot answer. */
export const SkippedSchema = T.Array(
  T.Object({
    zoneId: T.String({ format: 'uuid' }),
    reason: T.String({
      description: 'why the zone cannot answer: its amplifier and unit, or that the amplifier is not configured',
    }),
  }),
  { description: 'zones left as they were because they cannot answer, with the reason' },
);

export const Flag = (name: string) => T.Object({ [name]: T.Boolean({ errorMessage: 'must be true or false' }) });
