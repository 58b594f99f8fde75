// Daemon.inject(): the same request pipeline as the socket, so a request answers alike through either door.
import t from 'tap';
import { type Client, client, type Reply, type RequestOptions } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

/** The headers the pipeline itself sets (uWS adds Date and Content-Length on the wire). */
const PIPELINE_HEADERS = [
  'content-type',
  'x-content-type-options',
  'cache-control',
  'www-authenticate',
  'allow',
  'retry-after',
  'etag',
  'x-request-id',
];

/** What must match between the two doors: status, the pipeline's headers, and the body (request ids aside). */
function answer(reply: Reply, sentRequestId: boolean) {
  const headers: Record<string, string | null> = {};
  for (const name of PIPELINE_HEADERS) {
    if (name === 'x-request-id' && !sentRequestId) continue;
    headers[name] = reply.headers.get(name);
  }
  return { status: reply.status, headers, text: reply.text.replace(/"requestId":"[^"]*"/, '"requestId":"…"') };
}

t.test('inject() and the socket', async (t) => {
  const d = await startTestDaemon(t);
  const overSocket = client(d.base, d.adminKey);
  const inProcess = injectClient(d.daemon, d.adminKey);
  const both = async (method: string, path: string, options: RequestOptions = {}) => {
    const sentRequestId = Boolean(options.headers?.['X-Request-Id']);
    const [socket, injected] = await Promise.all(
      [overSocket, inProcess].map((api: Client) => api.call(method, path, options)),
    );
    return { socket: answer(socket!, sentRequestId), injected: answer(injected!, sentRequestId) };
  };
  const cases: Array<[string, string, string, RequestOptions]> = [
    ['a read with a key', 'GET', '/api/users/me', { headers: { 'X-Request-Id': 'same-id-1' } }],
    ['a read with its query', 'GET', '/api/playlists?limit=1', {}],
    ['no credential: 401 with WWW-Authenticate', 'GET', '/api/users/me', { key: '' }],
    ['a malformed Authorization header', 'GET', '/api/users/me', { key: '', headers: { Authorization: 'Basic eDp5' } }],
    ['an unknown route: 404', 'GET', '/api/nothing-here', {}],
    ['a wrong method: 405 with Allow', 'PATCH', '/api/zones', {}],
    ['a path id that is not a UUID: 400', 'GET', '/api/players/123', {}],
    ['a body over the cap: 413', 'POST', '/api/playlists', { body: { name: 'big', pad: 'x'.repeat(70 * 1024) } }],
    ['a body that is not JSON: 415', 'POST', '/api/playlists', { raw: 'name=x', contentType: 'text/plain' }],
    ['malformed JSON: 400', 'POST', '/api/playlists', { raw: '{"name":' }],
    ['a missing body: 400', 'POST', '/api/playlists', {}],
    ['an unknown key: 401', 'GET', '/api/users', { key: `svc_${'0'.repeat(48)}` }],
    [
      'a sensitive route answers with no-store',
      'POST',
      '/api/auth/login',
      { key: '', body: { username: 'nobody', password: 'wrong-password' } },
    ],
    ['HEAD: the headers of the GET without its body', 'HEAD', '/api/users/me', {}],
    ['a dashboard file', 'GET', '/', { key: '' }],
    ['the OpenAPI document', 'GET', '/api/openapi.json', { key: '' }],
  ];
  for (const [name, method, path, options] of cases) {
    t.test(`${name} answers alike`, async (t) => {
      const { socket, injected } = await both(method, path, options);
      t.same(injected, socket);
    });
  }

  t.test('a change made through inject() is seen over the socket', async (t) => {
    const made = await inProcess.post('/api/playlists', { name: 'Injected' });
    t.equal(made.status, 201);
    const { warnings, ...playlist } = made.body;
    t.same(warnings, [], 'no track, no warning');
    t.same((await overSocket.get(`/api/playlists/${made.body.id}`)).body, playlist);
  });

  t.test('inject() answers HEAD with an empty body and a 204 with none', async (t) => {
    const head = await inProcess.call('HEAD', '/api/users/me');
    t.equal(head.status, 200);
    t.equal(head.text, '');
    const id = (await inProcess.post('/api/playlists', { name: 'Gone soon' })).body.id;
    const deleted = await inProcess.del(`/api/playlists/${id}`);
    t.equal(deleted.status, 204);
    t.equal(deleted.text, '');
  });

  t.test('inject() authenticates the event stream but will not open it without a socket', async (t) => {
    t.equal((await injectClient(d.daemon).get('/api/stream/events')).status, 401);
    await t.rejects(inProcess.get('/api/stream/events'), /writes to a socket/);
  });

  t.test('inject() requests are in the access log like any other', async (t) => {
    await inProcess.get('/api/users/me', { headers: { 'X-Request-Id': 'logged-through-inject' } });
    t.ok(d.logs.some((line) => line.includes('"reqId":"logged-through-inject"') && line.includes('"msg":"request"')));
  });
});
