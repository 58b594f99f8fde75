// Players: listing (filtered by assignments), creation and deletion, routing to zones, and group volume.

import {
  PLAYER_CHANGE_NONE,
  type PlayersService,
  resolveOutput,
  type StreamOutputKind,
  volumeRequestOf,
} from '../domain/audio/index.js';
import { created, noContent, ok, type Route, route } from '../http/route.js';
import { AtLeastOneOf, IdParams, T, UuidList } from '../http/schema.js';
import {
  AmplifierName,
  Channel,
  DriverName,
  notFoundDoc,
  unavailableDoc,
  VolumeBody,
  volumeBadRequest,
} from './audio-bodies.js';
import { Name, PlayerSchema } from './schemas.js';

const ZoneIdsBody = T.Object({ zoneIds: UuidList('zone ids; duplicates are ignored') });
const zonesUnavailable = unavailableDoc("the player's amplifier is not configured, or a zone named cannot answer");

const OutputTarget = (description: string) =>
  T.Optional(
    T.String({ minLength: 1, maxLength: 1024, description, errorMessage: 'must be a string of 1 to 1024 characters' }),
  );
/** A stream player's output as a request names it; null (in a change) makes the player a device wired to its input again. */
const OutputBody = T.Union(
  [
    T.Object(
      {
        kind: T.Optional(
          T.Union([T.Literal('alsa'), T.Literal('fifo'), T.Literal('null')], {
            errorMessage: 'must be alsa, fifo or null',
          }),
        ),
        device: OutputTarget(
          'alsa: the ALSA device as aplay -L names it (default: "default"): default, sysdefault, hw, plughw, dmix, dsnoop, front, rear, center_lfe, side, ' +
            'surround21/40/41/50/51/71, iec958, spdif or hdmi, optionally with ":" and a card (hw:0,0, plughw:CARD=sndrpihifiberry,DEV=0); nothing else',
        ),
        path: OutputTarget(
          'fifo: the absolute path of the FIFO (required for fifo), leading into /run, /tmp, /var/tmp, /dev/shm or /srv, outside the state folder; ' +
            'an existing FIFO or nothing yet; stored as the path it leads to',
        ),
      },
      {
        description: 'the audio output MPD plays this player into; kind defaults to the playback.defaultOutput setting',
      },
    ),
    T.Null(),
  ],
  { errorMessage: 'must be null or an object {kind, device | path}' },
);
const outputConflict = {
  description:
    'the input already feeds another player, the output already carries another player (a FIFO however its path is spelled), or MPD is not installed (the problem says what to install)',
};

export function playerRoutes(players: PlayersService, defaults: { outputKind: StreamOutputKind }): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/players',
      access: 'user',
      summary: 'List the players visible to the caller',
      tags: ['players'],
      responses: { 200: { description: 'players', schema: T.Array(PlayerSchema) } },
      handle: (req) => ok(players.list(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/players',
      access: 'admin',
      summary:
        'Create a player fed into an amplifier input; with an output, a stream player the appliance plays itself',
      tags: ['players'],
      body: T.Object({
        name: Name,
        input: T.Object({ amplifier: AmplifierName, driver: DriverName, channel: Channel }),
        output: T.Optional(OutputBody),
      }),
      responses: { 201: { description: 'created', schema: PlayerSchema }, 409: outputConflict },
      handle: (req) =>
        created(
          players.create(req.caller, { ...req.body, output: resolveOutput(req.body.output, defaults.outputKind) }),
        ),
    }),
    route({
      method: 'GET',
      path: '/api/players/{id}',
      access: 'user',
      summary: 'Get a player',
      tags: ['players'],
      params: IdParams,
      responses: { 200: { description: 'the player', schema: PlayerSchema }, 404: notFoundDoc },
      handle: (req) => ok(players.get(req.caller, req.params.id)),
    }),
    route({
      method: 'PUT',
      path: '/api/players/{id}',
      access: 'admin',
      summary: 'Rename a player and/or change its stream output (null: a device wired to its input again)',
      tags: ['players'],
      params: IdParams,
      body: AtLeastOneOf(
        T.Object({ name: T.Optional(Name), output: T.Optional(OutputBody) }),
        ['name', 'output'],
        PLAYER_CHANGE_NONE,
      ),
      responses: { 200: { description: 'the player', schema: PlayerSchema }, 404: notFoundDoc, 409: outputConflict },
      handle: (req) =>
        ok(
          players.update(req.caller, req.params.id, {
            ...req.body,
            output: resolveOutput(req.body.output, defaults.outputKind),
          }),
        ),
    }),
    route({
      method: 'DELETE',
      path: '/api/players/{id}',
      access: 'admin',
      summary:
        'Delete a player (its zones are detached and muted); works for a player of an amplifier that is not configured too',
      tags: ['players'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: notFoundDoc },
      handle: (req) => {
        players.remove(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'PUT',
      path: '/api/players/{id}/volume',
      access: 'writer',
      summary:
        'Set the group volume: the attached zones you may touch move by the same proportion, each within its own limit',
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
      handle: (req) => players.setVolume(req.caller, req.params.id, volumeRequestOf(req.body)).then(noContent),
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
        players.attachZones(req.caller, req.params.id, req.body.zoneIds);
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
      responses: {
        204: { description: 'detached' },
        400: { description: 'invalid body or unknown zone ids' },
        404: notFoundDoc,
        409: zonesUnavailable,
      },
      handle: (req) => {
        players.detachZones(req.caller, req.params.id, req.body.zoneIds);
        return noContent();
      },
    }),
  ];
}
