// The JSON shape of a scene, as a schema: the API and the event stream document it, the types derive from it.
import { Type as T, type Static } from '@sinclair/typebox';

export const SceneZoneSchema = T.Object(
  {
    zoneId: T.String({ format: 'uuid' }),
    power: T.Boolean(),
    volume: T.Number({ minimum: 0, maximum: 1, format: 'double', description: "as captured; applied clamped to the zone's maxVolume" }),
    muted: T.Boolean(),
    playerId: T.Union([T.String({ format: 'uuid' }), T.Null()], { description: 'the player routed to the zone, or null for none' }),
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
