// Monoprice codec: encoding, status decoding and the framer under echoes, split chunks, extra CRs and noise.
import t from 'tap';
import {
  decodeStatus,
  encodeAttributeQuery,
  encodeQuery,
  encodeSet,
  encodeStatus,
  type Frame,
  LineFramer,
  parseCommand,
  ReplyCollector,
  type ZoneStatus,
} from '../../drivers/monoprice/protocol.js';

const ZONE_11: ZoneStatus = {
  zone: 11,
  pa: false,
  power: true,
  mute: false,
  dnd: false,
  volume: 13,
  treble: 11,
  bass: 12,
  balance: 10,
  source: 4,
  keypad: true,
};
const LINE_11 = '>1100010000131112100401';

/** Feeds the chunks one by one and collects every frame. */
function frames(...chunks: string[]): Frame[] {
  const framer = new LineFramer();
  return chunks.flatMap((chunk) => framer.push(Buffer.from(chunk, 'latin1')));
}

t.test('set commands, queries and attribute queries encode as the amplifier expects', async (t) => {
  t.equal(encodeSet(11, 'VO', 20), '<11VO20\r');
  t.equal(encodeSet(21, 'PR', 1), '<21PR01\r');
  t.equal(encodeSet(36, 'CH', 6), '<36CH06\r');
  t.equal(encodeQuery(11), '?11\r');
  t.equal(encodeQuery(10), '?10\r');
  t.equal(encodeAttributeQuery(11, 'VO'), '?11VO\r');
});

t.test('a status line decodes into every field', async (t) => {
  t.same(decodeStatus(LINE_11), ZONE_11);
  t.equal(encodeStatus(ZONE_11), LINE_11, 'and encodes back byte for byte');
});

t.test('status lines that do not match in full are dropped', async (t) => {
  t.equal(decodeStatus(LINE_11.slice(0, -1)), undefined, 'truncated');
  t.equal(decodeStatus(`${LINE_11}0`), undefined, 'too long');
  t.equal(decodeStatus(LINE_11.replace('13', '1x')), undefined, 'non-digit');
  t.equal(decodeStatus(LINE_11.replace('0013', '0093')), undefined, 'volume above 38');
  t.equal(decodeStatus('>4100010000131112100401'), undefined, 'no unit 4');
  t.equal(decodeStatus(LINE_11.replace('>1100', '>1107')), undefined, 'a flag that is not 00/01');
});

t.test('a set command gives its echo and one prompt, nothing more', async (t) => {
  t.same(frames('<11VO20\r\n#'), [{ kind: 'text', text: '<11VO20' }]);
});

t.test('a zone query gives the echo then the status line', async (t) => {
  t.same(frames(`?11\r\n#${LINE_11}\r\n#`), [
    { kind: 'text', text: '?11' },
    { kind: 'status', status: ZONE_11 },
  ]);
});

t.test('chunks split anywhere, even inside the prompt, frame the same as one chunk', async (t) => {
  const whole = `?11\r\n#${LINE_11}\r\n#`;
  const expected = frames(whole);
  for (let cut = 1; cut < whole.length; cut++) {
    t.same(frames(whole.slice(0, cut), whole.slice(cut)), expected, `cut at ${cut}`);
  }
  t.same(frames(...whole.split('')), expected, 'one byte at a time');
});

t.test('two frames in one chunk both come out', async (t) => {
  const second = LINE_11.replace('>11', '>12');
  const out = frames(`${LINE_11}\r\n#${second}\r\n#`);
  t.same(
    out.map((f) => (f.kind === 'status' ? f.status.zone : f.kind)),
    [11, 12],
  );
});

t.test('extra CRs before the prompt (whole-unit replies) are tolerated', async (t) => {
  const out = frames(`?10\r\n#${LINE_11}\r\r\n#${LINE_11.replace('>11', '>12')}\r\r\r\n#`);
  t.same(
    out.map((f) => f.kind),
    ['text', 'status', 'status'],
  );
});

t.test('a whole-unit reply of 168 bytes gives the echo and six status lines', async (t) => {
  const lines = [1, 2, 3, 4, 5, 6].map((i) => encodeStatus({ ...ZONE_11, zone: 10 + i }));
  const reply = `?10\r\n#${lines.map((l) => `${l}\r\r\n#`).join('')}`;
  t.equal(reply.length, 168);
  const out = frames(reply);
  t.equal(out.length, 7);
  t.same(
    out.slice(1).map((f) => (f.kind === 'status' ? f.status.zone : 0)),
    [11, 12, 13, 14, 15, 16],
  );
});

t.test('Command Error. is its own frame after the echo', async (t) => {
  t.same(frames('xyz\r\n#\r\nCommand Error.\r\n#'), [{ kind: 'text', text: 'xyz' }, { kind: 'error' }]);
});

t.test('a bare CR (resync) gives one empty frame', async (t) => {
  t.same(frames('\r\n#'), [{ kind: 'text', text: '' }]);
});

t.test('an attribute reply decodes', async (t) => {
  t.same(frames('?11VO\r\n#>11VO20\r\n#')[1], { kind: 'attribute', zone: 11, attribute: 'VO', value: 20 });
});

t.test('garbled lines become text frames and the next good line still decodes', async (t) => {
  const garbled = `${LINE_11.slice(0, 9)}\x00\xff${LINE_11.slice(11)}`;
  const out = frames(`?10\r\n#${garbled}\r\n#\x07\x1b[0m\r\n#${LINE_11}\r\n#`);
  t.same(
    out.map((f) => f.kind),
    ['text', 'text', 'text', 'status'],
  );
});

t.test('noise without any prompt is bounded, never throws, and does not block the next frame', async (t) => {
  const framer = new LineFramer();
  const noise = Buffer.alloc(10_000);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 256 === 10 ? 0 : (i * 7919) % 256;
  t.doesNotThrow(() => framer.push(noise));
  t.ok(framer.buffered.length <= 512, 'partial line is capped');
  framer.reset();
  t.same(framer.push(Buffer.from(`${LINE_11}\r\n#`)), [{ kind: 'status', status: ZONE_11 }]);
});

t.test('the emulator side parses commands, lower-case letters included', async (t) => {
  t.same(parseCommand('?10'), { kind: 'query', unit: 1, zone: 0 });
  t.same(parseCommand('?23'), { kind: 'query', unit: 2, zone: 3 });
  t.same(parseCommand('<11vo20'), { kind: 'set', unit: 1, zone: 1, attribute: 'VO', value: 20 });
  t.same(parseCommand('?11ls'), { kind: 'attribute-query', unit: 1, zone: 1, attribute: 'LS' });
  t.same(parseCommand(''), { kind: 'empty' });
  t.equal(parseCommand('<11PA01'), undefined, 'PA is read-only');
  t.equal(parseCommand('?40'), undefined, 'no unit 4');
  t.equal(parseCommand('hello'), undefined);
});

t.test('a set reply is complete at the prompt after its echo, without waiting for data', async (t) => {
  const reply = new ReplyCollector(0);
  t.equal(reply.accept(frames(`${LINE_11}\r\n#`)[0]!), undefined, 'a leftover status line before the echo is ignored');
  t.equal(reply.accept({ kind: 'text', text: '<11VO20' }), 'ok');
});

t.test('a set reply without an echo is complete at the bare prompt', async (t) => {
  const reply = new ReplyCollector(0);
  t.same(
    frames('\r\n#').map((f) => reply.accept(f)),
    ['ok'],
  );
});

t.test('Command Error. before any prompt is the answer: an amp without echo sends nothing before it', async (t) => {
  t.equal(new ReplyCollector(0).accept({ kind: 'error' }), 'error', 'a set');
  t.equal(new ReplyCollector(6, [11, 12, 13, 14, 15, 16]).accept({ kind: 'error' }), 'error', 'a query');
});

t.test('a whole-unit query is complete after six data lines, garbled ones counted but not kept', async (t) => {
  const reply = new ReplyCollector(6, new Set([11, 12, 13, 14, 15, 16]));
  const out = frames(`?10\r\n#${LINE_11}\r\n#`).map((f) => reply.accept(f));
  t.same(out, [undefined, undefined]);
  for (const line of [
    '>12garbled',
    LINE_11.replace('>11', '>13'),
    LINE_11.replace('>11', '>21'),
    LINE_11.replace('>11', '>15'),
  ]) {
    t.equal(reply.accept(frames(`${line}\r\n#`)[0]!), undefined);
  }
  t.equal(reply.accept(frames(`${LINE_11.replace('>11', '>16')}\r\n#`)[0]!), 'ok');
  t.same(
    reply.statuses.map((s) => s.zone),
    [11, 13, 15, 16],
    'stale zone 21 and the garbled line are dropped',
  );
});

t.test('a query answered with Command Error. ends as an error', async (t) => {
  const reply = new ReplyCollector(1, new Set([11]));
  const out = frames('?11\r\n#\r\nCommand Error.\r\n#').map((f) => reply.accept(f));
  t.same(out, [undefined, 'error']);
});

const unitLines = (cr = '\r', newline = '\r\n'): string[] =>
  [1, 2, 3, 4, 5, 6].map((i) => `${encodeStatus({ ...ZONE_11, zone: 10 + i })}${cr}${newline}#`);

/** Feeds a reply to a fresh collector for `?10`; returns what it ended with and the zones it kept. */
function collect(...chunks: string[]): { done: Array<string | undefined>; zones: number[]; prompted: boolean } {
  const reply = new ReplyCollector(6, [11, 12, 13, 14, 15, 16]);
  const done = frames(...chunks).map((f) => reply.accept(f));
  return { done, zones: reply.statuses.map((s) => s.zone), prompted: reply.prompted };
}

t.test('line breaks before the prompt: LF only, LF CR, a blank line and CR only all frame the same', async (t) => {
  for (const newline of ['\n', '\n\r', '\r\n\r\n', '\r', '\r\r\n']) {
    t.same(
      frames(`?11${newline}#${LINE_11}${newline}#`),
      [
        { kind: 'text', text: '?11' },
        { kind: 'status', status: ZONE_11 },
      ],
      JSON.stringify(newline),
    );
  }
  t.same(
    frames(`xyz\n#\nCommand Error.\n#`).map((f) => f.kind),
    ['text', 'error'],
    'Command Error. after LF only',
  );
});

t.test('a whole-unit reply is collected with the echo, without it, and starting with the data line', async (t) => {
  const lines = unitLines().join('');
  for (const [name, reply, prompted] of [
    ['echo and prompt', `?10\r\n#${lines}`, true],
    ['prompt only', `\r\n#${lines}`, true],
    ['data line first', lines, false],
    ['no extra CR', `?10\r\n#${unitLines('').join('')}`, true],
  ] as const) {
    const out = collect(reply);
    t.equal(out.done.at(-1), 'ok', `${name}: complete at the last line`);
    t.same(out.zones, [11, 12, 13, 14, 15, 16], `${name}: six zones`);
    t.equal(out.prompted, prompted, `${name}: prompted`);
  }
});

t.test('a reply split before and inside every prompt completes on its last byte', async (t) => {
  const whole = `?10\r\n#${unitLines().join('')}`;
  const out = collect(...whole.split(/(?=[\r\n#])/));
  t.equal(out.done.filter((d) => d === 'ok').length, 1);
  t.same(out.zones, [11, 12, 13, 14, 15, 16]);
});

t.test('garbled lines in a whole-unit reply are counted and dropped; the good ones are kept', async (t) => {
  const lines = unitLines();
  lines[1] = `>12000100\x9f?31112100401\r\r\n#`;
  lines[3] = `\x00\x07>1400\r\r\n#`;
  const out = collect(`?10\r\n#${lines.join('')}`);
  t.equal(out.done.at(-1), 'ok');
  t.same(out.zones, [11, 13, 15, 16]);
});

t.test('a prompt lost to noise ends the reply at the last zone instead of a timeout', async (t) => {
  const lines = unitLines();
  lines[2] = lines[2]!.replace('\r\r\n#', 'x'); // zones 13 and 14 run into one garbled line
  const out = collect(`?10\r\n#${lines.join('')}`);
  t.equal(out.done.at(-1), 'ok');
  t.same(out.zones, [11, 12, 15, 16]);
});

t.test('a data-line-first reply whose first line lost its > still ends at the last zone', async (t) => {
  const lines = unitLines();
  lines[0] = lines[0]!.slice(1);
  const out = collect(lines.join(''));
  t.equal(out.done.at(-1), 'ok');
  t.same(out.zones, [12, 13, 14, 15, 16]);
});

t.test('Command Error. in the middle of a whole-unit reply is noise, not the end of it', async (t) => {
  const lines = unitLines();
  lines.splice(3, 0, '\r\nCommand Error.\r\n#');
  const out = collect(`?10\r\n#${lines.join('')}`);
  t.same(out.done.filter(Boolean), ['ok']);
  t.same(out.zones, [11, 12, 13, 14, 15, 16]);
});
