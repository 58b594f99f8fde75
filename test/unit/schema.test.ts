// Request validation: messages that name the field, the rule and the value; one 400 HttpError per bad input.
import t from 'tap';
import { HttpError } from '../../daemon/http/problem.js';
import { isUuid, T, Uuid, UuidList, Validator, Volume } from '../../daemon/http/schema.js';

const volumeBody = new Validator(T.Object({ volume: Volume }));

function rejection(validator: Validator<any>, value: unknown, what: 'body' | 'path' | 'query' = 'body'): HttpError {
  try {
    validator.parse(value, what);
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error(`${JSON.stringify(value)} was accepted`);
}

t.test('a valid value is returned unchanged', async (t) => {
  const body = { volume: 0.5, extra: 'ignored' };
  t.equal(volumeBody.parse(body, 'body'), body);
});

t.test('an out-of-range number names the field, the rule and the value', async (t) => {
  const error = rejection(volumeBody, { volume: 1.5 });
  t.equal(error.status, 400);
  t.equal(error.detail, '"volume" must be a number from 0 to 1, got 1.5');
  t.same(error.options.errors, { volume: ['"volume" must be a number from 0 to 1, got 1.5'] });
});

t.test('a value of the wrong type shows the value it got', async (t) => {
  t.equal(rejection(volumeBody, { volume: '0.5' }).detail, '"volume" must be a number from 0 to 1, got "0.5"');
});

t.test('a missing required field is reported as required', async (t) => {
  const error = rejection(volumeBody, {});
  t.equal(error.detail, '"volume" is required');
  t.same(Object.keys(error.options.errors ?? {}), ['volume']);
});

t.test('a body that is not an object is rejected as the body', async (t) => {
  for (const value of [[0.5], 'volume', null, 42]) {
    const error = rejection(volumeBody, value);
    t.equal(error.status, 400);
    t.match(error.detail, /^"body" /, JSON.stringify(value));
    t.ok(error.options.errors?.body, 'the errors map has a "body" entry');
  }
});

t.test('a field without a custom message gets the library message, still naming field and value', async (t) => {
  const error = rejection(new Validator(T.Object({ name: T.String() })), { name: 7 });
  t.equal(error.detail, '"name" expected string, got 7');
});

t.test('nested fields are named with dots', async (t) => {
  const validator = new Validator(T.Object({ assignments: T.Object({ playerIds: T.Array(Uuid()) }) }));
  const error = rejection(validator, { assignments: { playerIds: ['0b6f3c62-9d1e-4a55-8f0e-7d2a3c4b5e6f', 'nope'] } });
  t.equal(error.detail, '"assignments.playerIds.1" must be a UUID, got "nope"');
});

t.test('every offending field gets its own entry', async (t) => {
  const validator = new Validator(T.Object({ volume: Volume, zoneIds: UuidList('zones') }));
  const error = rejection(validator, { volume: -1, zoneIds: [] });
  t.same(Object.keys(error.options.errors ?? {}).sort(), ['volume', 'zoneIds']);
  t.equal(error.options.errors?.zoneIds?.[0], '"zoneIds" must be an array of 1 to 256 UUID strings, got []');
});

t.test('a long offending value is shortened in the message', async (t) => {
  const error = rejection(new Validator(T.Object({ volume: Volume })), { volume: 'x'.repeat(500) });
  t.ok(error.detail.length < 150, `short detail: ${error.detail}`);
  t.match(error.detail, /\.\.\.$/);
});

t.test('path parameters report which parameter was invalid', async (t) => {
  const error = rejection(new Validator(T.Object({ id: Uuid() })), { id: 'abc' }, 'path');
  t.equal(error.detail, 'invalid path parameter: "id" must be a UUID, got "abc"');
});

t.test('UUIDs are accepted in either letter case', async (t) => {
  const validator = new Validator(T.Object({ id: Uuid() }));
  t.doesNotThrow(() => validator.parse({ id: '0B6F3C62-9D1E-4A55-8F0E-7D2A3C4B5E6F' }, 'path'));
});

t.test('isUuid takes the 8-4-4-4-12 hex form in either case and nothing else', async (t) => {
  const good = '0b6f3c62-9d1e-4a55-8f0e-7d2a3c4b5e6f';
  t.ok(isUuid(good));
  t.ok(isUuid(good.toUpperCase()), 'upper case');
  t.ok(isUuid('00000000-0000-0000-0000-000000000000'));
  t.ok(isUuid('ffffffff-FFFF-aaaa-AAAA-999999999999'));
  const bad = [
    '',
    good.slice(1),
    `${good}0`,
    good.replace(/-/g, ''),
    good.replace('-', '_'),
    `${good.slice(0, 8)}9${good.slice(9)}`,
    good.replace('b', 'g'),
    good.replace('b', 'G'),
    good.replace('0', '/'),
    good.replace('0', ':'),
    good.replace('a', '`'),
    good.replace('f', '@'),
    good.replace('6', ' '),
    `{${good.slice(1, 35)}}`,
  ];
  for (const value of bad) t.notOk(isUuid(value), JSON.stringify(value));
  // The same verdicts as the regular expression it replaces, over every position and character class.
  const re = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  let disagreements = 0;
  for (let i = 0; i < 36; i++) {
    for (let code = 0x20; code < 0x7f; code++) {
      const value = good.slice(0, i) + String.fromCharCode(code) + good.slice(i + 1);
      if (isUuid(value) !== re.test(value)) disagreements++;
    }
  }
  t.equal(disagreements, 0, 'agrees with /^[0-9a-f]{8}-…$/i on every one-character change');
});

t.test('a path parameter that is no UUID is a 400 naming it', async (t) => {
  const params = new Validator(T.Object({ id: Uuid() }));
  const err = rejection(params, { id: 'not-a-uuid' }, 'path');
  t.equal(err.status, 400);
  t.match(err.message, /"id" must be a UUID/);
});
