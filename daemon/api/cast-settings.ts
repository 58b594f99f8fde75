// A stream player's cast settings: which rooms wake when a cast starts, and whether they power off after it ends.

import type { CastRooms } from '../domain/playback/index.js';
import { MAX_CAST_OFF_MINUTES } from '../domain/playback/index.js';
import { ok, type Route, route } from '../http/route.js';
import { IdParams, T, Uuid } from '../http/schema.js';
import { notFoundDoc } from './audio-bodies.js';

const CastSettingsSchema = T.Object(
  {
    wakeZoneIds: T.Union(
      [
        T.Array(Uuid(), {
          maxItems: 256,
          description: 'the zones that wake, each on the amplifier the player feeds; [] wakes none',
        }),
        T.Null(),
      ],
      {
        description: 'null: the zones attached to the player when the cast starts',
        errorMessage: 'must be null (the zones attached when the cast starts) or an array of up to 256 zone ids',
      },
    ),
    offAfterMinutes: T.Union(
      [T.Integer({ minimum: 1, maximum: MAX_CAST_OFF_MINUTES, description: 'minutes after the cast ends' }), T.Null()],
      {
        description: 'the zones the cast woke power off this long after it ends; null: never',
        errorMessage: `must be null (never) or a whole number of minutes from 1 to ${MAX_CAST_OFF_MINUTES}`,
      },
    ),
  },
  { additionalProperties: false },
);

const notStream = { description: 'not a stream player (give it an output first)' };

export function castSettingsRoutes(rooms: CastRooms): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/players/{id}/cast-settings',
      access: 'user',
      summary: "A stream player's cast settings: the rooms that wake for a cast, and their power-off after it",
      tags: ['receivers'],
      params: IdParams,
      responses: {
        200: { description: 'the settings (wake zones you may not see are left out)', schema: CastSettingsSchema },
        404: notFoundDoc,
        409: notStream,
      },
      handle: (req) => ok(rooms.get(req.caller, req.params.id)),
    }),
    route({
      method: 'PUT',
      path: '/api/players/{id}/cast-settings',
      access: 'admin',
      summary: "Set a stream player's cast settings",
      description:
        'Replaces both settings. When a cast takes the output, the wake zones are attached if they are not and powered ' +
        'on (turn-on volume and limits apply); offAfterMinutes powers off the zones the cast woke that long after it ends.',
      tags: ['receivers'],
      params: IdParams,
      body: CastSettingsSchema,
      responses: {
        200: { description: 'the settings as stored', schema: CastSettingsSchema },
        400: {
          description:
            'a zone that does not exist, is named twice or is on another amplifier, or a delay that is not 1 to 720 minutes',
        },
        404: notFoundDoc,
        409: notStream,
      },
      handle: (req) => ok(rooms.set(req.caller, req.params.id, req.body)),
    }),
  ];
}
