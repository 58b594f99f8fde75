// Xantech codec: command encoding, every reply form, and the framer under split chunks, noise and missing line ends.
import t from 'tap';
import {
  classify,
  decodeStatus,
  encodeActivityUpdates,
  encodeQuery,
  encodeSet,
  encodeStatus,
  encodeValue,
  type Frame,
  Framer,
  parseCommand,
  type ZoneStatus,
} from '../../drivers/xantech/protocol.js';

const ZONE_1: ZoneStatus = {
  zone: 1,
  power: false,
  source: 1,
  volume: 0,
  mute: true,
  treble: 7,
  bass: 7,
  balance: 32,
  linked: false,
  paged: false,
};
const LINE_1 = '#1ZS PR0 SS1 VO0 MU1 TR7 BS7 BA32 LS0 PS0+';

/** Feeds the chunks one by one and collects every frame. */
function frames(...chunks: string[]): Frame[] {
  const framer = new Framer();
  return chunks.flatMap((chunk) => framer.push(Buffer.from(chunk, 'latin1')));
}

t.test('set commands, queries and the zone-activity switch encode as the manual writes them', async (t) => {
  t.equal(encodeSet(1, 'PR', 1), '!1PR1+');
  t.equal(encodeSet(8, 'SS', 3), '!8SS3+');
  t.equal(encodeSet(16, 'VO', 5), '!16VO5+', 'no zero padding');
  t.equal(encodeSet(2, 'MU', 0), '!2MU0+');
  t.equal(encodeQuery(5), '?5ZD+');
  t.equal(encodeQuery(5, 'SS'), '?5SS+');
  t.equal(encodeActivityUpdates(true), '!ZA1+');
  t.equal(encodeActivityUpdates(false), '!ZA0+');
});

t.test('the zone details reply decodes into every field and encodes back byte for byte', async (t) => {
  t.same(decodeStatus(LINE_1), ZONE_1);
  t.equal(encodeStatus(ZONE_1), LINE_1);
  t.same(
    decodeStatus('#16ZS PR1 SS8 VO38 MU0 TR14 BS0 BA63 LS1 PS1'),
    {
      zone: 16,
      power: true,
      source: 8,
      volume: 38,
      mute: false,
      treble: 14,
      bass: 0,
      balance: 63,
      linked: true,
      paged: true,
    },
    'without its +, two-digit zone, every maximum',
  );
});

t.test('a report with PO for power and fewer fields (look-alikes) decodes too', async (t) => {
  t.match(decodeStatus('#6ZS PO1 SS2 VO8 MU0 IS0+'), {
    zone: 6,
    power: true,
    source: 2,
    volume: 8,
    mute: false,
    balance: 32,
  });
});

t.test('reports with impossible values or missing fields are dropped', async (t) => {
  t.equal(decodeStatus(LINE_1.replace('VO0', 'VO39')), undefined, 'volume above 38');
  t.equal(decodeStatus(LINE_1.replace('SS1', 'SS9')), undefined, 'source 9');
  t.equal(decodeStatus(LINE_1.replace('SS1', 'SS0')), undefined, 'source 0');
  t.equal(decodeStatus(LINE_1.replace('BA32', 'BA64')), undefined, 'balance above 63');
  t.equal(decodeStatus(LINE_1.replace('PR0', 'PR2')), undefined, 'a flag that is not 0/1');
  t.equal(decodeStatus(LINE_1.replace('#1ZS', '#17ZS')), undefined, 'no zone 17');
  t.equal(decodeStatus(LINE_1.replace(' VO0', '')), undefined, 'no volume');
  t.equal(decodeStatus(LINE_1.replace('VO0', 'VO0 VO3')), undefined, 'a field twice');
  t.equal(decodeStatus(LINE_1.replace('VO0', 'V\xff0')), undefined, 'a garbled field');
});

t.test('every reply form classifies: OK, ERROR, zone details, single values, anything else', async (t) => {
  t.same(classify('OK'), { kind: 'ok' });
  t.same(classify('ERROR'), { kind: 'error' });
  t.same(classify(LINE_1), { kind: 'status', status: ZONE_1 });
  t.same(classify('?5SS3+'), { kind: 'value', zone: 5, attribute: 'SS', value: 3 });
  t.same(classify('?4VO20'), { kind: 'value', zone: 4, attribute: 'VO', value: 20 });
  t.same(classify('?4VO'), { kind: 'text', text: '?4VO' }, 'an echoed query is not a value');
  t.same(classify('?4VO99'), { kind: 'text', text: '?4VO99' }, 'nor an impossible one');
  t.same(classify('!1PR1'), { kind: 'text', text: '!1PR1' });
});

t.test('replies end with +, +CR, CR or nothing at all and frame the same', async (t) => {
  const expected = [
    { kind: 'ok' },
    { kind: 'status', status: ZONE_1 },
    { kind: 'error' },
    { kind: 'value', zone: 5, attribute: 'SS', value: 3 },
  ];
  t.same(frames(`OK\r${LINE_1}\rERROR\r?5SS3+\r`), expected, 'CR after each reply');
  t.same(frames(`OK${LINE_1}ERROR?5SS3+`), expected, 'no line ends at all');
  t.same(frames(`OK\r\n${LINE_1}\r\nERROR\r\n?5SS3+\r\n`), expected, 'CRLF');
  t.same(frames(`OK+\r${LINE_1}\rERROR+?5SS3+`), expected, '+ after OK and ERROR too');
});

t.test('chunks split anywhere frame the same as one chunk', async (t) => {
  const whole = `OK\r${LINE_1}\rERROR\r`;
  const expected = frames(whole);
  for (let cut = 1; cut < whole.length; cut++) {
    t.same(frames(whole.slice(0, cut), whole.slice(cut)), expected, `cut at ${cut}`);
  }
  t.same(frames(...whole.split('')), expected, 'one byte at a time');
});

t.test('two replies in one chunk both come out', async (t) => {
  const out = frames(`${LINE_1}\r${LINE_1.replace('#1ZS', '#2ZS')}\r`);
  t.same(
    out.map((f) => (f.kind === 'status' ? f.status.zone : f.kind)),
    [1, 2],
  );
});

t.test('noise before a report is cut off and the report still decodes', async (t) => {
  const out = frames(`\x00\xff\x1b[2J${LINE_1}\r`);
  t.same(out, [
    { kind: 'text', text: '\x00\xff\x1b[2J' },
    { kind: 'status', status: ZONE_1 },
  ]);
});

t.test('a garbled report becomes text and the next good one still decodes', async (t) => {
  const garbled = LINE_1.replace('SS1', 'S\x9f1');
  t.same(
    frames(`${garbled}\r${LINE_1}\r`).map((f) => f.kind),
    ['text', 'status'],
  );
  t.same(
    frames(`${LINE_1.slice(0, 16)}${LINE_1}\r`).map((f) => f.kind),
    ['text', 'status'],
    'a truncated one too',
  );
});

t.test('noise without any terminator is bounded, never throws, and does not block the next frame', async (t) => {
  const framer = new Framer();
  const noise = Buffer.alloc(10_000);
  for (let i = 0; i < noise.length; i++) {
    const b = (i * 7919) % 256;
    noise[i] = [0x2b, 0x0d, 0x0a, 0x23, 0x3f, 0x21].includes(b) ? 0x41 : b;
  }
  let out: Frame[] = [];
  t.doesNotThrow(() => (out = framer.push(noise)));
  t.ok(framer.buffered.length <= 256, 'partial frame is capped');
  t.ok(
    out.every((f) => f.kind === 'text' || f.kind === 'ok' || f.kind === 'error'),
    'noise never decodes as a report',
  );
  t.same(framer.push(Buffer.from(`\r${LINE_1}\r`)).at(-1), { kind: 'status', status: ZONE_1 });
});

t.test('random bytes never throw', async (t) => {
  const framer = new Framer();
  let seed = 7;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  for (let round = 0; round < 200; round++) {
    const chunk = Buffer.from(Array.from({ length: 1 + (random() % 64) }, random));
    t.doesNotThrow(() => framer.push(chunk), `round ${round}`);
  }
});

t.test("the emulator side parses every command form, the sources' variants included", async (t) => {
  t.same(parseCommand('!1PR1'), { kind: 'set', zone: 1, attribute: 'PR', value: 1 });
  t.same(parseCommand('!12vo05'), { kind: 'set', zone: 12, attribute: 'VO', value: 5 }, 'lower case and padding');
  t.same(parseCommand('!3BL31'), { kind: 'set', zone: 3, attribute: 'BA', value: 31 }, 'BL with a value sets balance');
  t.same(parseCommand('!3BL'), { kind: 'step', zone: 3, action: 'BL' }, 'BL without one is balance left');
  t.same(parseCommand('!4PT'), { kind: 'step', zone: 4, action: 'PT' });
  t.same(parseCommand('!AO'), { kind: 'all', power: false });
  t.same(parseCommand('!A0'), { kind: 'all', power: false });
  t.same(parseCommand('!AA'), { kind: 'all', power: true });
  t.same(parseCommand('!ZA1'), { kind: 'activity', on: true });
  t.same(parseCommand('!ZP10'), { kind: 'periodic', seconds: 10 });
  t.same(parseCommand('?5ZD'), { kind: 'query', zone: 5, attribute: 'ZD' });
  t.same(parseCommand('?5ZS'), { kind: 'query', zone: 5, attribute: 'ZD' });
  t.same(parseCommand('?5SS\r'), { kind: 'query', zone: 5, attribute: 'SS' });
  t.equal(parseCommand('!1XX1'), undefined);
  t.equal(parseCommand('!1V?1ZD'), undefined, 'a half command merged with the next');
  t.equal(parseCommand(''), undefined);
});

t.test('a single-value reply encodes as the query with the value appended', async (t) => {
  t.equal(encodeValue(5, 'SS', 3), '?5SS3+');
});
