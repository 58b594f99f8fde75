// RNET codec: the documents' byte examples, escapes, checksum, and the parser under noise, splits and bus traffic.
import t from 'tap';
import {
  checksum,
  classify,
  decodeEvent,
  decodeParameter,
  decodeZoneInfoReply,
  decodeZoneInfoRequest,
  encodeAllZones,
  encodeFrame,
  encodeKeypadKey,
  encodeMuteToggle,
  encodeParameter,
  encodeSource,
  encodeVolume,
  encodeZoneInfoReply,
  encodeZoneInfoRequest,
  encodeZonePower,
  escapeBytes,
  type Frame,
  FrameParser,
  PARAMETER,
  type ZoneInfo,
} from '../../drivers/rnet/protocol.js';

const hex = (b: Buffer): string => [...b].map((x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');
const bytes = (s: string): Buffer => Buffer.from(s.split(' ').map((x) => parseInt(x, 16)));

const INFO: ZoneInfo = {
  controller: 2,
  zone: 3,
  power: true,
  source: 4,
  volume: 30,
  bass: 10,
  treble: 10,
  loudness: false,
  balance: 10,
  systemOn: true,
  sharedSource: false,
  party: 0,
  dnd: false,
};

function parse(...chunks: Buffer[]): Frame[] {
  const parser = new FrameParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

t.test('the checksum is the sum of the bytes as sent plus their count, seven bits', async (t) => {
  t.equal(checksum(bytes('F0 00 67 7C F1 0F')), 0x59, 'the document example: 0x2D3 + 6 = 0x2D9');
});

t.test('bytes above 0x7F are sent as F1 and their inverse', async (t) => {
  t.same(escapeBytes([0xdc]), [0xf1, 0x23]);
  t.same(escapeBytes([0x80]), [0xf1, 0x7f], 'volume down');
  t.same(escapeBytes([0xf0, 0xf7, 0xf1]), [0xf1, 0x0f, 0xf1, 0x08, 0xf1, 0x0e], 'the frame markers themselves');
  t.same(escapeBytes([0x00, 0x7f]), [0x00, 0x7f], 'seven-bit bytes pass unchanged');
});

t.test('commands encode byte for byte as the protocol documents show them', async (t) => {
  t.equal(
    hex(encodeZoneInfoRequest(1, 1)),
    'F0 00 00 7F 00 00 70 01 04 02 00 00 07 00 00 7C F7',
    'all zone info, zone 1',
  );
  t.equal(
    hex(encodeKeypadKey(1, { controller: 0, zone: 0, keypad: 0x70 }, 0x7f)),
    'F0 00 00 7F 00 00 70 05 02 02 00 00 7F 00 00 00 00 00 01 7B F7',
    'zone 1 Vol Up',
  );
  t.match(
    hex(encodeZonePower(2, 3, true)),
    /^F0 01 00 7F 00 00 70 05 02 02 00 00 F1 23 00 01 00 02 00 01 [0-7][0-9A-F] F7$/,
  );
  t.match(hex(encodeSource(1, 4, 3)), /^F0 00 00 7F 00 03 70 05 02 00 00 00 F1 3E 00 00 00 02 00 01 [0-7][0-9A-F] F7$/);
  t.match(
    hex(encodeVolume(1, 2, 25)),
    /^F0 00 00 7F 00 00 70 05 02 02 00 00 F1 21 00 19 00 01 00 01 [0-7][0-9A-F] F7$/,
  );
  t.match(
    hex(encodeMuteToggle(1, 6)),
    /^F0 00 00 7F 00 05 70 05 02 02 00 00 F1 40 00 00 00 0D 00 01 [0-7][0-9A-F] F7$/,
  );
  t.match(hex(encodeAllZones(false)), /^F0 7E 00 7F 00 00 70 05 02 02 00 00 F1 22 00 00 00 00 00 01 [0-7][0-9A-F] F7$/);
  for (const frame of [
    encodeZonePower(2, 3, true),
    encodeSource(1, 4, 3),
    encodeVolume(1, 2, 25),
    encodeMuteToggle(1, 6),
  ]) {
    t.equal(frame.at(-2), checksum(frame, frame.length - 2), `checksum of ${hex(frame)}`);
    t.notOk(
      [...frame.subarray(1, -1)].some((b) => b > 0x7f && b !== 0xf1),
      'no high byte unescaped',
    );
  }
});

t.test('a zone info reply is 34 bytes with the data at offset 20 and decodes into every field', async (t) => {
  const reply = encodeZoneInfoReply(INFO);
  t.equal(reply.length, 34);
  t.equal(hex(reply.subarray(0, 20)), 'F0 00 00 70 01 00 7F 00 00 04 02 00 02 07 00 00 01 00 0C 00');
  t.same([...reply.subarray(20, 23)], [1, 3, 30], 'power, source-1, volume');
  const [frame] = parse(reply);
  t.ok(frame!.checksumOk);
  t.same(decodeZoneInfoReply(frame!), INFO);
});

t.test('a zone info request decodes to its controller and zone', async (t) => {
  const [frame] = parse(encodeZoneInfoRequest(3, 5));
  t.same(decodeZoneInfoRequest(frame!), { controller: 3, zone: 5 });
});

t.test('an escaped event id decodes back to the original byte', async (t) => {
  const [frame] = parse(encodeVolume(1, 2, 25));
  t.match(decodeEvent(frame!), { id: 0xde, timestamp: 25, data: 1, priority: 1 });
});

t.test('chunks split anywhere, even between F1 and its byte, parse the same as one chunk', async (t) => {
  const whole = Buffer.concat([encodeZonePower(1, 1, true), encodeZoneInfoReply(INFO)]);
  const expected = parse(whole);
  t.equal(expected.length, 2);
  for (let cut = 1; cut < whole.length; cut++) {
    t.same(parse(whole.subarray(0, cut), whole.subarray(cut)), expected, `cut at ${cut}`);
  }
  t.same(parse(...[...whole].map((b) => Buffer.from([b]))), expected, 'one byte at a time');
});

t.test('two frames in one chunk both come out', async (t) => {
  const out = parse(Buffer.concat([encodeZoneInfoReply(INFO), encodeZoneInfoReply({ ...INFO, zone: 4 })]));
  t.same(
    out.map((f) => decodeZoneInfoReply(f)?.zone),
    [3, 4],
  );
});

t.test('garbage before, between and inside frames is skipped and the parser resynchronises', async (t) => {
  const reply = encodeZoneInfoReply(INFO);
  const truncated = reply.subarray(0, 15); // lost its end: the next F0 starts over
  const out = parse(Buffer.from([0x00, 0x7f, 0xf7, 0x23, 0xf1]), truncated, reply, Buffer.from([0x55, 0xf7]), reply);
  t.same(
    out.map((f) => decodeZoneInfoReply(f)?.zone),
    [3, 3],
  );
});

t.test('a frame that arrives without its F0 is recovered when its checksum proves it whole', async (t) => {
  const reply = encodeZoneInfoReply(INFO);
  const out = parse(encodeZonePower(1, 1, true), reply.subarray(1));
  t.same(
    out.map((f) => decodeZoneInfoReply(f)?.zone),
    [undefined, 3],
    'the reply after a whole frame',
  );
  t.same(
    parse(Buffer.from([0x00, 0x7f, 0x00, 0x00, 0x70, 0x05, 0x02, 0x02, 0x33, 0xf7])),
    [],
    'a tail with a wrong checksum is not',
  );
});

t.test('a frame corrupted in transit fails its checksum', async (t) => {
  const reply = Buffer.from(encodeZoneInfoReply(INFO));
  reply[22] = 31; // volume 30 → 31
  const [frame] = parse(reply);
  t.equal(frame!.checksumOk, false);
});

t.test('nothing throws on random bytes and frames too short or too long are dropped', async (t) => {
  let seed = 7;
  const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 256;
  const parser = new FrameParser();
  for (let i = 0; i < 200; i++) {
    t.doesNotThrow(() => {
      for (const frame of parser.push(Buffer.from(Array.from({ length: 64 }, random)))) classify(frame);
    });
  }
  t.same(parse(bytes('F0 00 01 F7')), [], 'too short for a header');
  t.same(parse(Buffer.concat([Buffer.from([0xf0]), Buffer.alloc(600, 1), Buffer.from([0xf7])])), [], 'too long');
  t.same(parse(bytes('F0 00 00 7F 00 00 70 05 F1 12 F7')), [], 'an escape with nothing after it');
  t.same(parse(bytes('F0 00 00 7F 00 00 70 05 00 F1 F7')), [], 'an escape where the checksum should be');
});

t.test('bus traffic is told apart from replies addressed to us', async (t) => {
  const ctrl = { controller: 0, zone: 0, keypad: 0x7f };
  const keypad = { controller: 0, zone: 2, keypad: 0x01 };
  const heard = (frame: Buffer) => classify(parse(frame)[0]!);
  t.match(heard(encodeZoneInfoReply(INFO)), { kind: 'zone-info', info: { controller: 2, zone: 3 } });
  t.same(
    heard(encodeZoneInfoReply(INFO, { controller: 0, zone: 0, keypad: 0x71 })),
    { kind: 'other' },
    'a reply to another keypad',
  );
  t.same(
    heard(encodeFrame({ controller: 0, zone: 0, keypad: 0x79 }, ctrl, 0x00, [0x02, 0x01, 0x01, 0x00])),
    { kind: 'other' },
    'display feedback',
  );
  t.same(heard(encodeFrame(ctrl, keypad, 0x06, [0x00])), { kind: 'other' }, 'type 0x06');
  t.same(heard(encodeVolume(1, 1, 10)), { kind: 'other' }, 'an event from the host id (ours)');
  t.same(
    heard(encodeKeypadKey(1, keypad, 0x7f)),
    { kind: 'keypad', controller: 1, zone: 3, mute: false },
    'a wall keypad key',
  );
  const mute = encodeFrame(ctrl, keypad, 0x05, [0x02, 0x02, 0x00, 0x00, 0xbf, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x01]);
  t.same(heard(mute), { kind: 'keypad', controller: 1, zone: 3, mute: true }, 'a wall keypad mute toggle');
});

t.test('a reply with impossible values is taken for noise', async (t) => {
  const [frame] = parse(encodeZoneInfoReply({ ...INFO, volume: 51 }));
  t.equal(decodeZoneInfoReply(frame!), undefined);
});

t.test('a tone parameter set is the documented Set Data frame, and the emulator reads it back', async (t) => {
  // Controller 2, zone 3, treble 13: `F0 cc 00 7F 00 00 70 00 05 02 00 zz 00 PP 00 00 00 01 00 01 00 ## xx F7`.
  const frame = encodeParameter(2, 3, PARAMETER.treble, 13);
  const sent = hex(frame);
  t.equal(
    sent.slice(0, -6),
    'F0 01 00 7F 00 00 70 00 05 02 00 02 00 01 00 00 00 01 00 01 00 0D',
    'the documented bytes',
  );
  t.equal(frame[frame.length - 2], checksum(frame, frame.length - 2), 'with the documented checksum');
  const [parsed] = new FrameParser().push(frame);
  t.same(parsed && decodeParameter(parsed), { controller: 2, zone: 3, parameter: PARAMETER.treble, value: 13 });
  t.equal(parsed && decodeZoneInfoRequest(parsed), undefined, 'not taken for a zone info request');
  t.equal(parsed && classify(parsed).kind, 'other', 'nor for anything a host listens for');
});
