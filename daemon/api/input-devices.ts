// Input devices: readable by everyone, favorites changed by Operators and Admins, created and deleted by Admins.

import { INPUT_SETTINGS_NONE, type InputsService } from '../domain/audio/index.js';
import { created, noContent, ok, type Route, route } from '../http/route.js';
import { AtLeastOneOf, IdParams, T } from '../http/schema.js';
import { Flag, InputDeviceSchema, Name } from './schemas.js';

const Kind = T.String({
  minLength: 1,
  maxLength: 40,
  format: 'name',
  errorMessage: 'must be a string of 1 to 40 characters',
});

export function inputRoutes(inputs: InputsService): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/input-devices',
      access: 'user',
      summary: 'List input devices',
      tags: ['input devices'],
      responses: { 200: { description: 'input devices', schema: T.Array(InputDeviceSchema) } },
      handle: () => ok(inputs.list()),
    }),
    route({
      method: 'POST',
      path: '/api/input-devices',
      access: 'admin',
      summary: 'Create an input device on an amplifier input that has none',
      tags: ['input devices'],
      body: T.Object({
        name: Name,
        kind: T.Optional(Kind),
        input: T.Object({
          amplifier: T.Optional(
            T.String({
              minLength: 1,
              maxLength: 64,
              errorMessage: 'must be the name of a configured amplifier',
              description: 'required when several amplifiers are configured',
            }),
          ),
          driver: T.Optional(T.String()),
          channel: T.Integer({ minimum: 1, maximum: 99, errorMessage: 'must be an integer channel number' }),
        }),
      }),
      responses: {
        201: { description: 'created', schema: InputDeviceSchema },
        409: { description: 'input already described' },
      },
      handle: (req) => created(inputs.create(req.caller, req.body)),
    }),
    route({
      method: 'GET',
      path: '/api/input-devices/{id}',
      access: 'user',
      summary: 'Get an input device',
      tags: ['input devices'],
      params: IdParams,
      responses: {
        200: { description: 'the input device', schema: InputDeviceSchema },
        404: { description: 'no such input device' },
      },
      handle: (req) => ok(inputs.get(req.params.id)),
    }),
    route({
      method: 'PUT',
      path: '/api/input-devices/{id}',
      access: 'admin',
      summary: 'Rename an input device or change its kind',
      tags: ['input devices'],
      params: IdParams,
      body: AtLeastOneOf(
        T.Object({ name: T.Optional(Name), kind: T.Optional(Kind) }, { description: 'at least one of the fields' }),
        ['name', 'kind'],
        INPUT_SETTINGS_NONE,
      ),
      responses: {
        200: { description: 'the input device as changed', schema: InputDeviceSchema },
        404: { description: 'no such input device' },
      },
      handle: (req) => ok(inputs.update(req.caller, req.params.id, req.body)),
    }),
    route({
      method: 'DELETE',
      path: '/api/input-devices/{id}',
      access: 'admin',
      summary: 'Delete an input device (not recreated from the amplifier on restart)',
      tags: ['input devices'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'no such input device' } },
      handle: (req) => {
        inputs.remove(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'PUT',
      path: '/api/input-devices/{id}/favorite',
      access: 'writer',
      summary: 'Mark or unmark an input device as favorite',
      tags: ['input devices'],
      params: IdParams,
      body: Flag('isFavorite'),
      responses: { 204: { description: 'stored' }, 404: { description: 'no such input device' } },
      handle: (req) => {
        inputs.setFavorite(req.caller, req.params.id, req.body.isFavorite as boolean);
        return noContent();
      },
    }),
  ];
}
