// A stand-in AirPlay receiver for tests of cover art through the daemon: a shell script whose log says it plays and
// sends a cover, as shairport-sync's metadata pipe does (PICT), then waits to be stopped. Given to the daemon's
// casting runtime as castingOptions.kinds.airplay: the runtime, supervisor and API around it are the real ones.
import { randomBytes } from 'node:crypto';
import type { ReceiverKind } from '../../drivers/receivers/receiver.js';

/** A JPEG's first bytes and its end, random between: what the API serves is what the receiver gave. */
export const COVER = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  randomBytes(3000),
  Buffer.from([0xff, 0xd9]),
]);

/** Its log says `playing`, then `art <base64>` (COVER); it then waits to be stopped. */
export const coverReceiver: ReceiverKind = {
  kind: 'airplay',
  program: 'sh',
  debianPackage: 'dash',
  launch: () => ({
    args: ['-c', `printf 'playing\\nart %s\\n' "$COVER" >&2; exec sleep 3600`],
    pcm: 'stdout',
    env: { COVER: COVER.toString('base64') },
  }),
  parser: () => ({
    line: (line) => {
      if (line === 'playing') return [{ type: 'state', state: 'playing' }];
      if (line.startsWith('art '))
        return [
          {
            type: 'metadata',
            metadata: { artwork: { mime: 'image/jpeg', data: Buffer.from(line.slice(4), 'base64') } },
          },
        ];
      return [];
    },
  }),
  volume: { toLevel: (value) => value, fromLevel: (level) => level },
};
