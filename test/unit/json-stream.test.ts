// JSON read in pieces gives what JSON.parse gives, however the text is cut; detached arrays hand their elements over.

import fc from 'fast-check';
import t from 'tap';
import { type JsonPath, JsonStream, type JsonStreamOptions } from '../../daemon/domain/backup/json-stream.js';

const OPTIONS: JsonStreamOptions = {
  detach: () => false,
  onElement: () => undefined,
  maxDepth: 64,
  maxKeptChars: 1e9,
  maxStringChars: 1e9,
};

/** Feeds `text` cut at the given places and returns the value. */
function parseInPieces(text: string, cuts: number[], options = OPTIONS): unknown {
  const stream = new JsonStream(options);
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    stream.write(text.slice(at, cut));
    at = cut;
  }
  stream.write(text.slice(at));
  return stream.end();
}

t.test('any JSON value cut anywhere reads as JSON.parse reads it', async (t) => {
  fc.assert(
    fc.property(fc.json({ maxDepth: 6 }), fc.array(fc.nat(), { maxLength: 12 }), (text, raw) => {
      const cuts = raw.map((n) => n % (text.length + 1));
      const pretty = JSON.stringify(JSON.parse(text), null, 1);
      t.same(parseInPieces(text, cuts), JSON.parse(text));
      t.same(
        parseInPieces(
          pretty,
          cuts.map((c) => Math.min(c, pretty.length)),
        ),
        JSON.parse(text),
      );
    }),
    { numRuns: 300 },
  );
});

t.test('escapes cut in the middle, unicode escapes and surrogate pairs survive', async (t) => {
  const text = JSON.stringify({ a: 'x"\\\n\u0001é😀\u2028', 'k"ey': ['\ud83d\ude00'] });
  for (let cut = 0; cut <= text.length; cut++) t.same(parseInPieces(text, [cut]), JSON.parse(text), `cut at ${cut}`);
});

t.test('elements of a detached array are handed over with their path and not kept', async (t) => {
  const seen: Array<[unknown, JsonPath]> = [];
  const options = {
    ...OPTIONS,
    detach: (path: JsonPath) => path.length === 3 && path[0] === 'lists' && path[2] === 'items',
    onElement: (v: unknown, p: JsonPath) => void seen.push([v, p]),
  };
  const value = parseInPieces(
    '{"lists":[{"id":1,"items":[{"a":1},[2],3]},{"items":[],"id":2}],"items":[9]}',
    [5, 30],
    options,
  );
  t.same(value, {
    lists: [
      { id: 1, items: [] },
      { items: [], id: 2 },
    ],
    items: [9],
  });
  t.same(seen, [
    [{ a: 1 }, ['lists', 0, 'items', 0]],
    [[2], ['lists', 0, 'items', 1]],
    [3, ['lists', 0, 'items', 2]],
  ]);
});

t.test('invalid JSON, deep nesting and too much kept text are refused with where it happened', async (t) => {
  for (const bad of [
    '{"a":1,}',
    '[1 2]',
    '{"a" 1}',
    '{a:1}',
    '"\\x"',
    '"a\u0001"',
    '[1]]',
    'tru',
    '01',
    '{"a":[}',
    '"open',
  ]) {
    t.throws(
      () => parseInPieces(bad, [2]),
      /is not valid JSON( at character \d+|: it ends before its value does)/,
      bad,
    );
  }
  t.throws(() => parseInPieces('[[[[1]]]]', [], { ...OPTIONS, maxDepth: 3 }), /nest more than 3 levels/);
  t.throws(() => parseInPieces('{"a":1,"b":2,"a":3}', []), /the key "a" appears twice/);
  const polluted = parseInPieces('{"__proto__":{"admin":true}}', []) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(polluted), Object.prototype, '"__proto__" does not set the prototype');
  t.same(Object.keys(polluted), ['__proto__'], 'it is an own key, as JSON.parse makes it');
  t.throws(
    () => parseInPieces('{"a":"0123456789"}', [], { ...OPTIONS, maxKeptChars: 10 }),
    /apart from its tracks is larger than 10/,
  );
  t.throws(() => parseInPieces('["0123456789"]', [], { ...OPTIONS, maxStringChars: 5 }), /longer than 5 characters/);
  const detached = {
    ...OPTIONS,
    maxKeptChars: 20,
    detach: (p: JsonPath) => p.length === 1,
    onElement: () => undefined,
  };
  t.same(
    parseInPieces(`{"t":[${'"0123456789",'.repeat(50)}1]}`, [7], detached),
    { t: [] },
    'detached elements do not count as kept',
  );
});
