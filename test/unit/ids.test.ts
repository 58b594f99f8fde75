// The one id decoder (daemon/ids.ts): what a schema calls an id comes out lower-cased, in place, and nothing else.

import { Type as T } from '@sinclair/typebox';
import t from 'tap';
import { Id, idDecoder } from '../../daemon/ids.js';

const UPPER = 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D';
const LOWER = UPPER.toLowerCase();

t.test('ids in objects, arrays and nullable unions are lowered, other strings are left as sent', async (t) => {
  const schema = T.Object({
    name: T.String(),
    zoneIds: T.Array(Id()),
    targets: T.Array(T.Object({ zoneId: Id(), playerId: T.Union([Id(), T.Null()]), label: T.String() })),
    sceneId: T.Optional(Id()),
  });
  const value = {
    name: 'Kitchen ABC',
    zoneIds: [UPPER],
    targets: [
      { zoneId: UPPER, playerId: UPPER, label: 'Loud' },
      { zoneId: UPPER, playerId: null, label: 'Off' },
    ],
  };
  t.equal(idDecoder(schema)!(value), value, 'decoded in place');
  t.same(value, {
    name: 'Kitchen ABC',
    zoneIds: [LOWER],
    targets: [
      { zoneId: LOWER, playerId: LOWER, label: 'Loud' },
      { zoneId: LOWER, playerId: null, label: 'Off' },
    ],
  });
});

t.test('a schema without ids has no decoder, so its values cost nothing', async (t) => {
  t.equal(idDecoder(T.Object({ volume: T.Number(), name: T.String() })), undefined);
});
