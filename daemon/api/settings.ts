// The Home Assistant bridge settings (admins): broker URL, broker login and the azcd account the bridge acts as,
// applied at once without a restart.

import { BRIDGE_CHANGE_NONE, BRIDGE_FIELDS, BRIDGE_STATES, type BridgeSettings } from '../domain/settings/index.js';
import { ok, type Route, route } from '../http/route.js';
import { AtLeastOneOf, T } from '../http/schema.js';
import { ProblemSchema } from './schemas.js';

const problem = (description: string) => ({
  description,
  schema: ProblemSchema,
  contentType: 'application/problem+json',
});

/** The bridge's state, as in GET /api/health. */
export const BridgeStatusSchema = T.Object(
  {
    state: T.Union(BRIDGE_STATES.map((s) => T.Literal(s))),
    detail: T.Optional(
      T.String({ description: 'why it is not connected, or what is misconfigured and how to fix it' }),
    ),
  },
  { description: 'the MQTT bridge, present only when a broker URL is set' },
);

const Text = (max: number, what: string) =>
  T.Union([T.String({ maxLength: max }), T.Null()], {
    description: `${what}; null or "" removes the saved value`,
    errorMessage: `must be a string of at most ${max} characters, or null`,
  });

const SettingsSchema = T.Object({
  url: T.Union([T.String(), T.Null()], {
    description: 'the broker, mqtt://host:1883 or mqtts://host:8883; null: the bridge is off',
  }),
  username: T.Union([T.String(), T.Null()], {
    description: 'the broker login (the user the broker knows, not an azcd user)',
  }),
  passwordSet: T.Boolean({ description: 'whether a broker password is set; the password itself is never returned' }),
  account: T.Union([T.String(), T.Null()], {
    description:
      'the azcd user the bridge acts as: its role and assignments decide what Home Assistant sees and may do',
  }),
  locked: T.Array(T.Union(BRIDGE_FIELDS.map((f) => T.Literal(f))), {
    description:
      'fields set at start (flags, environment, config file): they win over these settings and cannot be changed here',
  }),
  baseTopic: T.String({ description: 'prefix of every state and command topic (set at start only)' }),
  discoveryPrefix: T.String({ description: "Home Assistant's discovery prefix (set at start only)" }),
  status: T.Union([BridgeStatusSchema, T.Null()], { description: 'null while no broker URL is set' }),
});

export function bridgeSettingsRoutes(settings: BridgeSettings): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/settings/mqtt',
      access: 'admin',
      summary: 'The Home Assistant (MQTT) bridge settings that apply now, and its state',
      tags: ['settings'],
      responses: {
        200: {
          description: 'the settings; the broker password is only reported as set or not',
          schema: SettingsSchema,
        },
      },
      handle: (req) => ok(settings.view(req.caller)),
    }),
    route({
      method: 'PUT',
      path: '/api/settings/mqtt',
      access: 'admin',
      summary: 'Change the bridge settings; the bridge reconnects with them at once',
      description:
        'Fields left out stay as they are; null (or "") removes a saved value. The broker password is stored sealed with ' +
        'the device key and never returned. A field set at start (flag, environment or config file) wins and cannot be ' +
        'changed here (409). The answer comes once the old connection is closed and the new one is being made.',
      tags: ['settings'],
      body: AtLeastOneOf(
        T.Object({
          url: T.Optional(Text(256, 'the broker URL, mqtt://host:1883 or mqtts://host:8883')),
          username: T.Optional(Text(256, 'the broker login')),
          password: T.Optional(
            T.Union([T.String({ maxLength: 1024 }), T.Null()], {
              description: 'the broker password; null removes it; left out, the saved one stays',
              writeOnly: true,
              errorMessage: 'must be a string of 1 to 1024 characters, or null',
            }),
          ),
          account: T.Optional(Text(64, 'the azcd username the bridge acts as (an existing user)')),
        }),
        [...BRIDGE_FIELDS],
        BRIDGE_CHANGE_NONE,
      ),
      responses: {
        200: { description: 'saved and applied', schema: SettingsSchema },
        400: { description: 'a field is malformed, names no azcd user, or a password is left without a username' },
        409: problem(
          'a field is set at start (flag, environment or config file) and wins over these settings, or the URL names another broker while the broker password is set at start without one',
        ),
      },
      handle: async (req) => ok(await settings.update(req.caller, req.body)),
    }),
  ];
}
