// A stream player's receivers (AirPlay, UPnP/DLNA, Squeezelite): how each one is switched and runs, and an admin's
// switch of one on or off.

import type { ReceiverSwitches } from '../domain/playback/index.js';
import {
  KINDS_IN_WORDS,
  NAMES_IN_WORDS,
  ReceiverKindSchema,
  ReceiverSchema,
  SERVER_KINDS,
} from '../domain/shared/index.js';
import { ok, type Route, route } from '../http/route.js';
import { T, Uuid } from '../http/schema.js';
import { notFoundDoc } from './audio-bodies.js';

const KindParams = T.Object({
  id: Uuid(),
  kind: ReceiverKindSchema({
    description: `the receiver: ${KINDS_IN_WORDS}`,
    errorMessage: `must be ${KINDS_IN_WORDS}`,
  }),
});

const SwitchBody = T.Object({
  enabled: T.Boolean({ description: 'true: the receiver runs for this player', errorMessage: 'must be true or false' }),
  server: T.Optional(
    T.Union(
      [
        T.String({
          minLength: 1,
          maxLength: 259,
          description: `${SERVER_KINDS} only: its music server (Lyrion Music Server, Music Assistant), host or host:port`,
        }),
        T.Null(),
      ],
      {
        description: 'null or left out: the music server is found on the LAN',
        errorMessage: 'must be null or a string such as lms.lan or 192.168.1.20:9000',
      },
    ),
  ),
});

const notStream = { description: 'not a stream player (give it an output first)' };

export function receiverRoutes(receivers: ReceiverSwitches): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/players/{id}/receivers',
      access: 'user',
      summary: `A stream player's receivers: ${NAMES_IN_WORDS}, each switched on or off, and how it runs`,
      tags: ['receivers'],
      params: T.Object({ id: Uuid() }),
      responses: {
        200: {
          description: 'every receiver kind, in this order',
          schema: T.Object({ items: T.Array(ReceiverSchema) }),
        },
        404: notFoundDoc,
        409: notStream,
      },
      handle: (req) => ok({ items: receivers.list(req.caller, req.params.id) }),
    }),
    route({
      method: 'PUT',
      path: '/api/players/{id}/receivers/{kind}',
      access: 'admin',
      summary: "Switch one of a stream player's receivers on or off",
      description:
        'Answers once the receiver started or stopped. Switching on needs its program installed (409 naming the Debian package ' +
        `otherwise); switching off never does. Only ${SERVER_KINDS} takes a server.`,
      tags: ['receivers'],
      params: KindParams,
      body: SwitchBody,
      responses: {
        200: { description: 'the receiver', schema: ReceiverSchema },
        400: {
          description: `an unknown kind, a server for another kind than ${SERVER_KINDS}, or a server that is not host or host:port`,
        },
        404: notFoundDoc,
        409: {
          description:
            "not a stream player, or the receiver's program is not installed (the problem names the package)",
        },
      },
      handle: (req) => receivers.set(req.caller, req.params.id, req.params.kind, req.body).then(ok),
    }),
  ];
}
