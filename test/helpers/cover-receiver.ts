// A stand-in AirPlay receiver for tests of cover art through the daemon: a shell script whose log says it plays and
// sends a cover, as shairport-sync's metadata pipe does (PICT), then waits to be stopped. Given to the daemon's
// casting runtime as castingOptions.kinds.airplay: the runtime, supervisor and API around it are the real ones.
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { ReceiverKind } from '../../drivers/receivers/receiver.js';

/** A JPEG's first bytes and its end, random between: what the API serves is what the receiver gave. */
export const COVER = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  randomBytes(3000),
  Buffer.from([0xff, 0xd9]),
]);

/** A receiver whose log says `playing`, then `art <base64>` (`cover`, of type `mime`); it then waits to be stopped. */
export function coverReceiverOf(cover: Buffer, mime: string): ReceiverKind {
  return {
    kind: 'airplay',
    displayName: 'AirPlay',
    takesServer: false,
    program: 'sh',
    debianPackage: 'dash',
    launch: () => ({
      args: ['-c', `printf 'playing\\nart %s\\n' "$COVER" >&2; exec sleep 3600`],
      pcm: 'stdout',
      env: { COVER: cover.toString('base64') },
    }),
    parser: () => ({
      line: (line) => {
        if (line === 'playing') return [{ type: 'state', state: 'playing' }];
        if (line.startsWith('art '))
          return [{ type: 'metadata', metadata: { artwork: { mime, data: Buffer.from(line.slice(4), 'base64') } } }];
        return [];
      },
    }),
    volume: { toLevel: (value) => value, fromLevel: (level) => level },
  };
}

/** The stand-in sending COVER. */
export const coverReceiver = coverReceiverOf(COVER, 'image/jpeg');

/** A PNG a browser draws: `size` × `size` pixels of one colour (RGB). */
export function solidPng(size: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgb).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
