// Zones: listing (filtered by assignments), creation, settings and deletion, volume, mute and power, and All off.

import { TONE_NONE, volumeRequestOf, ZONE_SETTINGS_NONE, type ZonesService } from '../domain/audio/index.js';
import { SceneToneSchema } from '../domain/shared/index.js';
import { created, noContent, ok, type Route, route } from '../http/route.js';
import { AtLeastOneOf, IdParams, T, Volume } from '../http/schema.js';
import {
  AmplifierName,
  Channel,
  DriverName,
  notFoundDoc,
  unavailableDoc,
  VolumeBody,
  volumeBadRequest,
} from './audio-bodies.js';
import { Name, SkippedSchema, ZoneSchema } from './schemas.js';

const zoneUnavailable = unavailableDoc(
  'the zone cannot answer (its unit is not fitted or silent, or its amplifier is not configured)',
);
const ZoneSettingsBody = AtLeastOneOf(
  T.Object(
    {
      name: T.Optional(Name),
      maxVolume: T.Optional(
        T.Number({ ...Volume, description: 'the most this zone ever plays at (every path is clamped to it)' }),
      ),
      turnOnVolume: T.Optional(
        T.Union([T.Number({ ...Volume }), T.Null()], {
          description:
            'the volume the zone starts at when it powers on (applied clamped to maxVolume); null: keep the volume it had',
          errorMessage: 'must be a number from 0 to 1, or null',
        }),
      ),
    },
    { description: 'at least one of the fields' },
  ),
  ['name', 'maxVolume', 'turnOnVolume'],
  ZONE_SETTINGS_NONE,
);

// The controls a scene zone carries, one or more of them: the same values and messages.
const ToneBody = AtLeastOneOf(
  T.Object(
    { ...SceneToneSchema.properties },
    { description: 'one or more of the controls; any other field is refused' },
  ),
  ['bass', 'treble', 'balance', 'loudness'],
  TONE_NONE,
);

export function zoneRoutes(zones: ZonesService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/zones',
      access: 'user',
      summary: 'List the zones visible to the caller',
      tags: ['zones'],
      responses: { 200: { description: 'zones', schema: T.Array(ZoneSchema) } },
      handle: (req) => ok(zones.list(req.caller)),
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
      handle: async (req) => ok(await zones.allOff(req.caller)),
    }),
    route({
      method: 'GET',
      path: '/api/zones/free-outputs',
      access: 'admin',
      summary: 'List the zone outputs of the configured amplifiers that have no zone',
      description: 'What POST /api/zones may use: outputs whose zone was deleted, or that no zone was ever made for.',
      tags: ['zones'],
      responses: {
        200: {
          description: 'the free outputs, by amplifier and channel',
          schema: T.Array(T.Object({ amplifier: T.String(), driver: T.String(), channel: T.Integer({ minimum: 1 }) })),
        },
      },
      handle: (req) => ok(zones.freeOutputs(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/zones',
      access: 'admin',
      summary: 'Create a zone on an amplifier output that has none',
      tags: ['zones'],
      body: T.Object({
        name: Name,
        output: T.Object({ amplifier: AmplifierName, driver: DriverName, channel: Channel }),
      }),
      responses: { 201: { description: 'created', schema: ZoneSchema }, 409: { description: 'output already used' } },
      handle: (req) => created(zones.create(req.caller, req.body)),
    }),
    route({
      method: 'GET',
      path: '/api/zones/{id}',
      access: 'user',
      summary: 'Get a zone',
      tags: ['zones'],
      params: IdParams,
      responses: { 200: { description: 'the zone', schema: ZoneSchema }, 404: notFoundDoc },
      handle: (req) => ok(zones.get(req.caller, req.params.id)),
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
        200: {
          description: 'the zone; lowering maxVolume below its volume pulled the volume down',
          schema: ZoneSchema,
        },
        400: { description: 'no known field, or a value out of range' },
        404: notFoundDoc,
      },
      handle: (req) => ok(zones.update(req.caller, req.params.id, req.body)),
    }),
    route({
      method: 'DELETE',
      path: '/api/zones/{id}',
      access: 'admin',
      summary:
        'Delete a zone (it is not recreated from the amplifier on restart); works for a zone that cannot answer too',
      tags: ['zones'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: notFoundDoc },
      handle: (req) => {
        zones.remove(req.caller, req.params.id);
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
      handle: (req) => zones.setVolume(req.caller, req.params.id, volumeRequestOf(req.body)).then(noContent),
    }),
    route({
      method: 'PUT',
      path: '/api/zones/{id}/tone',
      access: 'writer',
      summary: "Set one or more of a zone's tone controls (bass, treble, balance on -1..1; loudness)",
      description:
        "The zone's toneControls say which controls its amplifier has. Writes land while the amplifier pages (amplifierStatus.paging); the page still wins on the amplifier until it ends.",
      tags: ['zones'],
      params: IdParams,
      body: ToneBody,
      responses: {
        204: { description: 'stored' },
        400: { description: 'no control named, a field that is no control, or a value out of range' },
        404: notFoundDoc,
        409: {
          ...zoneUnavailable,
          description: `a control the zone's amplifier lacks (the problem quotes why), or ${zoneUnavailable.description}`,
        },
      },
      handle: (req) => zones.setTone(req.caller, req.params.id, req.body as Record<string, unknown>).then(noContent),
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
      handle: (req) => zones.setMuted(req.caller, req.params.id, req.body.muted).then(noContent),
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
      handle: (req) => zones.setPower(req.caller, req.params.id, req.body.power).then(noContent),
    }),
  ];
}
