// Access-log lines: valid JSON in pino's shape, apiKey values redacted, client text escaped.

import { Writable } from 'node:stream';
import t from 'tap';
import { createAccessLog } from '../../daemon/http/access-log.js';
import { createLogger } from '../../daemon/log.js';

function capture(level = 'info') {
  const lines: string[] = [];
  const logger = createLogger(
    level,
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  return { lines, log: createAccessLog(logger) };
}

t.test('a line is one JSON object with the request fields and no apiKey value', async (t) => {
  const { lines, log } = capture();
  log({
    requestId: 'r-1',
    method: 'GET',
    url: '/api/stream/events?apiKey=svc_abc&APIKEY=x&lastEventId=4',
    status: 200,
    ms: 0.25,
  });
  t.equal(lines.length, 1);
  const entry = JSON.parse(lines[0]!);
  t.match(entry, {
    level: 30,
    time: Number,
    service: 'azcd',
    reqId: 'r-1',
    method: 'GET',
    status: 200,
    ms: 0.25,
    msg: 'request',
  });
  t.equal(entry.path, '/api/stream/events?apiKey=[redacted]&APIKEY=[redacted]&lastEventId=4');
  t.notMatch(lines[0], /svc_abc/);
});

t.test('quotes, backslashes and control characters from the client stay inside their strings', async (t) => {
  const { lines, log } = capture();
  log({ requestId: 'r-2', method: 'GE"T', url: '/api/x"}\n{"evil":1\\', status: 404, ms: 1 });
  const entry = JSON.parse(lines[0]!);
  t.equal(entry.method, 'GE"T');
  t.equal(entry.path, '/api/x"}\n{"evil":1\\');
  t.equal(entry.evil, undefined);
});

t.test('nothing is written above the info level', async (t) => {
  const { lines, log } = capture('warn');
  log({ requestId: 'r-3', method: 'GET', url: '/', status: 200, ms: 1 });
  t.same(lines, []);
});

t.test(
  'an apiKey parameter is redacted however its name is encoded, as the query parser would decode it',
  async (t) => {
    const { lines, log } = capture();
    const cases: Array<[string, string]> = [
      ['api%4Bey=svc_a', 'api%4Bey=[redacted]'],
      ['api%4bey=svc_a&lastEventId=4', 'api%4bey=[redacted]&lastEventId=4'],
      ['%61%70%69%4b%65%79=svc_a', '%61%70%69%4b%65%79=[redacted]'],
      ['apiKey=svc_a&apiKey=svc_b', 'apiKey=[redacted]&apiKey=[redacted]'],
      ['api+Key=svc_a', 'api+Key=[redacted]'],
      ['apiKey%3Dsvc_a', '[redacted]'],
      ['x=%zz&apiKey=svc_a', 'x=%zz&apiKey=[redacted]'],
      ['apiKeyword=1', 'apiKeyword=[redacted]'],
      ['keep=1&limit=5', 'keep=1&limit=5'],
    ];
    for (const [query] of cases)
      log({ requestId: 'r-4', method: 'GET', url: `/api/stream/events?${query}`, status: 200, ms: 1 });
    t.same(
      lines.map((line) => JSON.parse(line).path),
      cases.map(([, logged]) => `/api/stream/events?${logged}`),
    );
  },
);

t.test('a key is redacted wherever it is and however it is separated or encoded', async (t) => {
  const { lines, log } = capture();
  const key = `svc_${'ab12'.repeat(12)}`;
  const cases: Array<[string, string]> = [
    // The probe's case: `;` is no separator for the query parser, so this is no credential, but it is logged.
    [`/api/zones?x=1;apiKey=${key}`, '/api/zones?x=1;apiKey=[redacted]'],
    [`/api/zones?x=1;y=${key}`, '/api/zones?x=1;y=[redacted]'],
    [`/api/zones?x=%73vc%5F${key.slice(4)}`, '/api/zones?x=[redacted]'],
    [`/api/zones?x=%2573vc_${key.slice(4)}&limit=2`, '/api/zones?x=[redacted]&limit=2'],
    [`/api/users/${key}/api-key`, '/api/users/[redacted]/api-key'],
    [`/api/zones;apiKey=${key}`, '/api/zones;apiKey=[redacted]'],
    ['/api/zones?token=abc;password=hunter2&limit=1', '/api/zones?token=[redacted];password=[redacted]&limit=1'],
    ['/api/zones?Pass%77ord=hunter2', '/api/zones?Pass%77ord=[redacted]'],
    [`/api/zones?x=SST_${'A'.repeat(43)}`, '/api/zones?x=[redacted]'],
    ['/api/playlists?limit=5&offset=10', '/api/playlists?limit=5&offset=10'],
  ];
  for (const [url] of cases) log({ requestId: 'r-5', method: 'GET', url, status: 401, ms: 1 });
  t.same(
    lines.map((line) => JSON.parse(line).path),
    cases.map(([, logged]) => logged),
  );
  t.notMatch(lines.join(''), /ab12ab12|hunter2|AAAA/, 'no part of a secret is logged');
});

t.test("a component's child logger writes the access log to the same stream, in the same form", async (t) => {
  const lines: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const log = createAccessLog(logger.child({ component: 'http' }).child({ part: 'pipeline' }));
  log({ requestId: 'r-6', method: 'GET', url: '/api/zones', status: 200, ms: 0.5 });
  t.equal(lines.length, 1);
  t.same(
    Object.keys(JSON.parse(lines[0]!)),
    ['level', 'time', 'service', 'reqId', 'method', 'path', 'status', 'ms', 'msg'],
    "the access log's own line, not pino's serializer with the child's bindings",
  );
});
