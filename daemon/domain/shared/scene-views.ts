// The JSON shape of a scene, as a schema: the API and the event stream document it, the types derive from it.
import { type Static, Type as T } from '@sinclair/typebox';

const ToneValue = (what: string) =>
  T.Optional(
    T.Number({
      minimum: -1,
      maximum: 1,
      format: 'double',
      description: what,
      errorMessage: 'must be a number from -1 to 1',
    }),
  );

/** The tone a scene gives a zone: the controls captured (those the zone's amplifier has); each one absent is left as it is. */
export const SceneToneSchema = T.Object(
  {
    bass: ToneValue('-1 full cut, 0 flat, 1 full boost'),
    treble: ToneValue('-1 full cut, 0 flat, 1 full boost'),
    balance: ToneValue('-1 full left, 0 centre, 1 full right'),
    loudness: T.Optional(T.Boolean({ errorMessage: 'must be true or false' })),
  },
  { title: 'SceneTone', description: "the zone's tone as captured; a control its amplifier lacks is not applied" },
);

export const SceneZoneSchema = T.Object(
  {
    zoneId: T.String({ format: 'uuid' }),
    power: T.Boolean(),
    volume: T.Number({
      minimum: 0,
      maximum: 1,
      format: 'double',
      description: "as captured; applied clamped to the zone's maxVolume",
    }),
    muted: T.Boolean(),
    playerId: T.Union([T.String({ format: 'uuid' }), T.Null()], {
      description: 'the player routed to the zone, or null for none',
    }),
    tone: T.Optional(SceneToneSchema),
  },
  { title: 'SceneZone', description: 'the state a scene gives one zone' },
);

export const SceneSchema = T.Object(
  {
    id: T.String({ format: 'uuid' }),
    name: T.String(),
    zones: T.Array(SceneZoneSchema),
    createdAt: T.String({ format: 'date-time' }),
    updatedAt: T.String({ format: 'date-time' }),
  },
  { title: 'Scene', description: 'a saved state of a set of zones (power, volume, mute, player), applied in one step' },
);

export type SceneZoneView = Static<typeof SceneZoneSchema>;
export type SceneView = Static<typeof SceneSchema>;
