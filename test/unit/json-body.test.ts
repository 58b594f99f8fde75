// Request bodies: JSON nesting is bounded before parsing, and no input shape can turn validation into a 500.
import t from 'tap';
import { HttpError } from '../../daemon/http/problem.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody, T, Validator, Volume } from '../../daemon/http/schema.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

function rejection(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error('accepted');
}

t.test('a body nested exactly to the bound parses; one level more is a 400 that says why', async (t) => {
  t.same(parseJsonBody(bytes(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`), 'application/json'), {
    a: JSON.parse(nested(MAX_JSON_DEPTH - 1)),
  });
  const error = rejection(() => parseJsonBody(bytes(`{"a":${nested(MAX_JSON_DEPTH)}}`), 'application/json'));
  t.equal(error.status, 400);
  t.match(error.detail, /more than 32 levels deep/);
});

t.test('brackets inside strings, escaped quotes included, are not nesting', async (t) => {
  t.notOk(nestsDeeperThan(bytes(JSON.stringify({ name: `\\"${'['.repeat(100)}` })), MAX_JSON_DEPTH));
  t.ok(
    nestsDeeperThan(bytes(`{"name":"\\\\",${'"x":{'.repeat(40)}}`), MAX_JSON_DEPTH),
    'an escaped backslash ends the string',
  );
});

t.test('objects count as levels as well as arrays', async (t) => {
  t.ok(nestsDeeperThan(bytes(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`), MAX_JSON_DEPTH));
});

t.test('a value too deep for validation messages is a 400, not a RangeError', async (t) => {
  let value: unknown = 1;
  for (let i = 0; i < 20_000; i++) value = [value];
  const error = rejection(() => new Validator(T.Object({ volume: Volume })).parse({ volume: value }, 'body'));
  t.equal(error.status, 400);
  t.match(error.detail, /"volume" must be a number from 0 to 1, got an array/);
});
