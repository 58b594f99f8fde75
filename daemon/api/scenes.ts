// Scenes (save, edit, apply, undo) and zone sleep timers.

import type { ScenesService, SleepTimers } from '../domain/scenes/index.js';
import { MAX_SLEEP_MINUTES, SCENE_CHANGE_NONE } from '../domain/scenes/index.js';
import { SceneSchema, SceneToneSchema } from '../domain/shared/index.js';
import { created, noContent, ok, type Route, route } from '../http/route.js';
import { AtLeastOneOf, IdParams, T, Uuid, UuidList, Volume } from '../http/schema.js';
import { ProblemSchema, SkippedSchema, ZoneSchema } from './schemas.js';

const SceneName = T.String({
  minLength: 1,
  maxLength: 64,
  pattern: '\\S',
  format: 'name',
  description:
    'unique as people read it: names equal after Unicode compatibility normalisation (NFKC), without invisible (default-ignorable) characters and ' +
    'regardless of letter case, are the same; leading and trailing spaces are dropped',
  errorMessage: 'must be a string of 1 to 64 characters, not blank',
});

const SceneZoneInput = T.Object({
  zoneId: Uuid('the zone'),
  power: T.Boolean({ errorMessage: 'must be true or false' }),
  volume: Volume,
  muted: T.Boolean({ errorMessage: 'must be true or false' }),
  playerId: T.Union([Uuid('the player routed to the zone'), T.Null()], { errorMessage: 'must be a UUID or null' }),
  tone: T.Optional(SceneToneSchema),
});

const ApplyResultSchema = T.Object({
  applied: T.String({ description: 'the scene id, or "undo"' }),
  zoneIds: T.Array(T.String({ format: 'uuid' }), { description: 'the zones the apply set' }),
  skipped: SkippedSchema,
});

/** An error answer documented with its problem-details body (the generated document adds 400-404 by itself). */
const problem = (description: string) => ({
  description,
  schema: ProblemSchema,
  contentType: 'application/problem+json',
});
const sceneNotFound = { description: 'no such scene, or it covers a zone outside your assignments' };
const applyNote =
  'Pop-free: the affected zones are muted, then powered, routed and set to their volumes (each clamped to its ' +
  'maxVolume), then unmuted where the scene wants them unmuted; zones the scene switches off go off last. The state ' +
  'replaced is saved first as the undo slot. Applies run one at a time. Zones that cannot answer (a unit not fitted or silent, ' +
  'an amplifier not configured) are left as they are and listed in skipped; when none can answer the apply is a 409.';

export function sceneRoutes(scenes: ScenesService, sleepTimers: SleepTimers): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/scenes',
      access: 'user',
      summary: 'List the scenes whose zones the caller may all see, by name',
      tags: ['scenes'],
      responses: { 200: { description: 'scenes', schema: T.Array(SceneSchema) } },
      handle: (req) => ok(scenes.list(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/scenes',
      access: 'admin',
      summary: 'Save the current state of zones as a new scene',
      description: `Captures power, volume, mute and player of each zone (default: every zone). At most ${scenes.limits.scenes} scenes (limits.scenes).`,
      tags: ['scenes'],
      body: T.Object({
        name: SceneName,
        zoneIds: T.Optional(UuidList('the zones to capture (default: all); duplicates are ignored')),
      }),
      responses: {
        201: { description: 'saved', schema: SceneSchema },
        400: { description: 'invalid body or unknown zone ids' },
        409: problem(
          'a scene with that name exists, the scene limit (limits.scenes) is reached, or a zone named cannot answer (its present state is unknown)',
        ),
      },
      handle: (req) => created(scenes.create(req.caller, req.body)),
    }),
    route({
      method: 'POST',
      path: '/api/scenes/undo',
      access: 'writer',
      summary: 'Undo the last scene applied (a second undo redoes it)',
      description: applyNote,
      tags: ['scenes'],
      responses: {
        200: { description: 'applied', schema: ApplyResultSchema },
        404: problem('the last apply covered zones outside your assignments'),
        409: problem('nothing to undo, or no zone of it can answer'),
      },
      handle: async (req) => ok(await scenes.undo(req.caller, () => req.revalidate())),
    }),
    route({
      method: 'GET',
      path: '/api/scenes/{id}',
      access: 'user',
      summary: 'Get a scene',
      tags: ['scenes'],
      params: IdParams,
      responses: { 200: { description: 'the scene', schema: SceneSchema }, 404: sceneNotFound },
      handle: (req) => ok(scenes.get(req.caller, req.params.id)),
    }),
    route({
      method: 'PUT',
      path: '/api/scenes/{id}',
      access: 'admin',
      summary: 'Rename a scene and/or replace its captured zone states',
      tags: ['scenes'],
      params: IdParams,
      body: AtLeastOneOf(
        T.Object({
          name: T.Optional(SceneName),
          zones: T.Optional(
            T.Array(SceneZoneInput, {
              minItems: 1,
              maxItems: 256,
              errorMessage: 'must be an array of 1 to 256 zone states',
            }),
          ),
        }),
        ['name', 'zones'],
        SCENE_CHANGE_NONE,
      ),
      responses: {
        200: { description: 'the scene', schema: SceneSchema },
        400: {
          description:
            'invalid body, neither name nor zones, unknown zone or player ids, a zone listed twice, or a player of another amplifier than the zone',
        },
        404: sceneNotFound,
        409: problem('a scene with that name exists'),
      },
      handle: (req) => ok(scenes.update(req.caller, req.params.id, req.body)),
    }),
    route({
      method: 'DELETE',
      path: '/api/scenes/{id}',
      access: 'admin',
      summary: 'Delete a scene',
      tags: ['scenes'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: sceneNotFound },
      handle: (req) => {
        scenes.remove(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'POST',
      path: '/api/scenes/{id}/apply',
      access: 'writer',
      summary: 'Apply a scene to its zones without pops, saving the state replaced for undo',
      description: applyNote,
      tags: ['scenes'],
      params: IdParams,
      responses: {
        200: { description: 'applied', schema: ApplyResultSchema },
        404: sceneNotFound,
        409: problem('every zone of the scene was deleted, or none of them can answer'),
      },
      handle: async (req) => ok(await scenes.apply(req.caller, req.params.id, () => req.revalidate())),
    }),
    route({
      method: 'PUT',
      path: '/api/zones/{id}/sleep',
      access: 'writer',
      summary: 'Set (or with 0 cancel) a sleep timer that powers the zone off',
      description:
        'The timer is stored: it survives a restart, and one already due then fires at once. Powering the zone off by any path cancels it.',
      tags: ['zones'],
      params: IdParams,
      body: T.Object({
        minutes: T.Number({
          minimum: 0,
          maximum: MAX_SLEEP_MINUTES,
          description: 'minutes from now (fractions allowed); 0 cancels',
          errorMessage: `must be a number of minutes from 0 to ${MAX_SLEEP_MINUTES}`,
        }),
      }),
      responses: {
        200: { description: 'the zone, with sleepUntil set (or null)', schema: ZoneSchema },
        404: { description: 'no such zone, or not in your assignments' },
        409: problem(
          'the zone is off, or it cannot answer (its unit or its amplifier is named); a cancel (minutes 0) works on any zone',
        ),
      },
      handle: (req) => ok(sleepTimers.set(req.caller, req.params.id, req.body.minutes)),
    }),
  ];
}
