// Players and zones: listing (filtered by assignments), routing, volume, mute and power.
import { T, IdParams, Volume, UuidList, AtLeastOneOf, ExactlyOneOf } from '../http/schema.js';
import { route, ok, created, noContent, type Route } from '../http/route.js';
import { ZONE_SETTINGS_NONE, type AudioService } from '../domain/audio/audio.js';
import { VOLUME_REQUEST_FIELDS, volumeRequestOf } from '../domain/audio/volume-rule.js';
import { Name, PlayerSchema, ProblemSchema, SkippedSchema, ZoneSchema } from './schemas.js';

const Channel = T.Integer({ minimum: 1, maximum: 99, errorMessage: 'must be an integer channel number' });
const DriverName = T.Optional(T.String({ errorMessage: 'must be a string' }));
const AmplifierName = T.Optional(
  T.String({ minLength: 1, maxLength: 64, errorMessage: 'must be the name of a configured amplifier', description: 'required when several amplifiers are configured' }),
);
const ZoneIdsBody = T.Object({ zoneIds: UuidList('zone ids; duplicates are ignored') });
const notFoundDoc = { description: 'no such player/zone, or not in your assignments' };
/** The 409 of a write to a zone or player that cannot take it, documented with its problem-details body. */
const unavailableDoc = (what: string) => ({
  description: `${what}: the problem names the amplifier and its unit that does not answer, or the amplifier that is not configured; nothing was changed`,
  schema: ProblemSchema,
  contentType: 'application/problem+json',
});
const zoneUnavailable = unavailableDoc('the zone cannot answer (its unit is not fitted or silent, or its amplifier is not configured)');
const zonesUnavailable = unavailableDoc('the player\'s amplifier is not configured, or a zone named cannot answer');
const Delta = T.Number({
  minimum: -1,
  maximum: 1,
  format: 'double',
  description: 'a change of the current volume on the daemon: 0.05 means 5 points louder',
  errorMessage: 'must be a number from -1 to 1',
});
const VolumeBody = ExactlyOneOf(
  T.Object(
    { volume: T.Optional(Volume), delta: T.Optional(Delta) },
    { description: 'exactly one of "volume" (absolute) and "delta" (relative to the current value); the result is clamped to each zone\'s maxVolume' },
  ),
  ['volume', 'delta'],
  VOLUME_REQUEST_FIELDS,
);
const volumeBadRequest = { description: 'both or neither of "volume" and "delta", or a value out of range' };
const ZoneSettingsBody = AtLeastOneOf(T.Object(
  {
    name: T.Optional(Name),
    maxVolume: T.Optional(T.Number({ ...Volume, description: 'the most this zone ever plays at (every path is clamped to it)' })),
    turnOnVolume: T.Optional(
      T.Union([T.Number({ ...Volume }), T.Null()], {
        description: 'the volume the zone starts at when it powers on (applied clamped to maxVolume); null: keep the volume it had',
        errorMessage: 'must be a number from 0 to 1, or null',
      }),
    ),
  },
  { description: 'at least one of the fields' },
), ['name', 'maxVolume', 'turnOnVolume'], ZONE_SETTINGS_NONE);

export function playerRoutes(audio: AudioService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/players',
      access: 'user',
      summary: 'List the players visible to the caller',
      tags: ['players'],
      responses: { 200: { description: 'players', schema: T.Array(PlayerSchema) } },
      handle: (req) => ok(audio.listPlayers(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/players',
      access: 'admin',
      summary: 'Create a player fed into an amplifier input',
      tags: ['players'],
      body: T.Object({ name: Name, input: T.Object({ amplifier: AmplifierName, driver: DriverName, channel: Channel }) }),
      responses: { 201: { description: 'created', schema: PlayerSchema }, 409: { description: 'input already used' } },
      handle: (req) => created(audio.createPlayer(req.caller, req.body)),
    }),
    route({
      method: 'GET',
      path: '/api/players/{id}',
      access: 'user',
      summary: 'Get a player',
      tags: ['players'],
      params: IdParams,
      responses: { 200: { description: 'the player', schema: PlayerSchema }, 404: notFoundDoc },
      handle: (req) => ok(audio.getPlayer(req.caller, req.params.id)),
    }),
    route({
      method: 'PUT',
      path: '/api/players/{id}',
      access: 'admin',
      summary: 'Rename a player',
      tags: ['players'],
      params: IdParams,
      body: T.Object({ name: Name }),
      responses: { 200: { description: 'the player', schema: PlayerSchema }, 404: notFoundDoc },
      handle: (req) => ok(audio.renamePlayer(req.caller, req.params.id, req.body.name)),
    }),
    route({
      method: 'DELETE',
      path: '/api/players/{id}',
      access: 'admin',
      summary: 'Delete a player (its zones are detached and muted); works for a player of an amplifier that is not configured too',
      tags: ['players'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: notFoundDoc },
      handle: (req) => {
        audio.deletePlayer(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'PUT',
      path: '/api/players/{id}/volume',
      access: 'writer',
      summary: 'Set the group volume: the attached zones you may touch move by the same proportion, each within its own limit',
      description: 'Zones that cannot answer keep their volume; the others move.',
      tags: ['players'],
      params: IdParams,
      body: VolumeBody,
      responses: {
        204: { description: 'stored; the amplifier follows asynchronously' },
        400: volumeBadRequest,
        404: notFoundDoc,
        409: unavailableDoc("the player's amplifier is not configured, or none of the zones you may touch can answer"),
      },
      handle: (req) => audio.setPlayerVolume(req.caller, req.params.id, volumeRequestOf(req.body)).then(noContent),
    }),
    route({
      method: 'POST',
      path: '/api/players/{id}/attach-zones',
      access: 'writer',
      summary: "Route the player's input to zones (powers them on, unmutes; moves them from other players)",
      tags: ['players'],
      params: IdParams,
      body: ZoneIdsBody,
      responses: {
        204: { description: 'attached' },
        400: { description: 'invalid body, unknown zone ids, or zones of another amplifier than the player feeds' },
        404: notFoundDoc,
        409: zonesUnavailable,
      },
      handle: (req) => {
        audio.attachZones(req.caller, req.params.id, req.body.zoneIds);
        return noContent();
      },
    }),
    route({
      method: 'POST',
      path: '/api/players/{id}/detach-zones',
      access: 'writer',
      summary: 'Remove the route to zones (they are muted and belong to no player)',
      tags: ['players'],
      params: IdParams,
      body: ZoneIdsBody,
      responses: { 204: { description: 'detached' }, 400: { description: 'invalid body or unknown zone ids' }, 404: notFoundDoc, 409: zonesUnavailable },
      handle: (req) => {
        audio.detachZones(req.caller, req.params.id, req.body.zoneIds);
        return noContent();
      },
    }),
    route({
      method: 'GET',
      path: '/api/zones',
      access: 'user',
      summary: 'List the zones visible to the caller',
      tags: ['zones'],
      responses: { 200: { description: 'zones', schema: T.Array(ZoneSchema) } },
      handle: (req) => ok(audio.listZones(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/zones/all-off',
      access: 'writer',
      summary: 'Power off every zone you may see that is on',
      description: 'Zones that cannot answer are left alone and listed in skipped (those last known to be on).',
      tags: ['zones'],
      responses: {
        200: {
          description: 'the zones switched off, and those skipped',
          schema: T.Object({
            zoneIds: T.Array(T.String({ format: 'uuid' }), { description: 'the zones that were on and are now off' }),
            skipped: SkippedSchema,
          }),
        },
      },
      handle: async (req) => ok(await audio.allOff(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/zones',
      access: 'admin',
      summary: 'Create a zone on an amplifier output that has none',
      tags: ['zones'],
      body: T.Object({ name: Name, output: T.Object({ amplifier: AmplifierName, driver: DriverName, channel: Channel }) }),
      responses: { 201: { description: 'created', schema: ZoneSchema }, 409: { description: 'output already used' } },
      handle: (req) => created(audio.createZone(req.caller, req.body)),
    }),
    route({
      method: 'GET',
      path: '/api/zones/{id}',
      access: 'user',
      summary: 'Get a zone',
      tags: ['zones'],
      params: IdParams,
      responses: { 200: { description: 'the zone', schema: ZoneSchema }, 404: notFoundDoc },
      handle: (req) => ok(audio.getZone(req.caller, req.params.id)),
    }),
    route({
      method: 'PUT',
      path: '/api/zones/{id}',
      access: 'admin',
      summary: 'Rename a zone or set its volume limits (maxVolume, turnOnVolume)',
      description:
        'Settings are stored even while the zone cannot answer; its volume is then held to a lowered limit once it answers again.',
      tags: ['zones'],
      params: IdParams,
      body: ZoneSettingsBody,
      responses: {
        200: { description: 'the zone; lowering maxVolume below its volume pulled the volume down', schema: ZoneSchema },
        400: { description: 'no known field, or a value out of range' },
        404: notFoundDoc,
      },
      handle: (req) => ok(audio.updateZone(req.caller, req.params.id, req.body)),
    }),
    route({
      method: 'DELETE',
      path: '/api/zones/{id}',
      access: 'admin',
      summary: 'Delete a zone (it is not recreated from the amplifier on restart); works for a zone that cannot answer too',
      tags: ['zones'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: notFoundDoc },
      handle: (req) => {
        audio.deleteZone(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'PUT',
      path: '/api/zones/{id}/volume',
      access: 'writer',
      summary: "Set one zone's volume, absolute or relative; above the zone's maxVolume it is clamped to it",
      tags: ['zones'],
      params: IdParams,
      body: VolumeBody,
      responses: { 204: { description: 'stored' }, 400: volumeBadRequest, 404: notFoundDoc, 409: zoneUnavailable },
      handle: (req) => audio.setZoneVolume(req.caller, req.params.id, volumeRequestOf(req.body)).then(noContent),
    }),
    route({
      method: 'PUT',
      path: '/api/zones/{id}/mute',
      access: 'writer',
      summary: 'Mute or unmute a zone',
      tags: ['zones'],
      params: IdParams,
      body: T.Object({ muted: T.Boolean({ errorMessage: 'must be true or false' }) }),
      responses: { 204: { description: 'stored' }, 404: notFoundDoc, 409: zoneUnavailable },
      handle: (req) => audio.setZoneMuted(req.caller, req.params.id, req.body.muted).then(noContent),
    }),
    route({
      method: 'PUT',
      path: '/api/zones/{id}/power',
      access: 'writer',
      summary: 'Switch a zone on or off',
      tags: ['zones'],
      params: IdParams,
      body: T.Object({ power: T.Boolean({ errorMessage: 'must be true or false' }) }),
      responses: { 204: { description: 'stored' }, 404: notFoundDoc, 409: zoneUnavailable },
      handle: (req) => audio.setZonePower(req.caller, req.params.id, req.body.power).then(noContent),
    }),
  ];
}
