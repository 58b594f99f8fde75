// The path router: static beats param, decoded params, 405 with the allowed methods, trailing slash, not-found.
import t from 'tap';
import { type RouteLookup, Router } from '../../daemon/http/router.js';

function usersRouter(): Router<string> {
  const router = new Router<string>();
  router.add('GET', '/api/users', 'list');
  router.add('POST', '/api/users', 'create');
  router.add('GET', '/api/users/me', 'me');
  router.add('GET', '/api/users/{id}', 'get');
  router.add('PUT', '/api/users/{id}', 'update');
  router.add('DELETE', '/api/users/{id}', 'delete');
  router.add('GET', '/api/users/{id}/api-key', 'key');
  router.add('PUT', '/api/users/{id}/password', 'password');
  return router;
}

const found = (lookup: RouteLookup<string>) => (lookup.kind === 'found' ? lookup.match : undefined);

t.test('a static segment beats a parameter at the same position', async (t) => {
  const match = found(usersRouter().find('GET', '/api/users/me'));
  t.equal(match?.route, 'me');
  t.same(match?.params, {}, 'no parameter is captured for the static route');
});

t.test('a parameter segment matches anything else and is captured by name', async (t) => {
  const match = found(usersRouter().find('GET', '/api/users/0b6f3c62-9d1e-4a55-8f0e-7d2a3c4b5e6f'));
  t.equal(match?.route, 'get');
  t.same(match?.params, { id: '0b6f3c62-9d1e-4a55-8f0e-7d2a3c4b5e6f' });
});

t.test('a static branch that leads nowhere falls back to the parameter branch', async (t) => {
  // "me" is static, but only /api/users/{id}/api-key exists below it.
  const match = found(usersRouter().find('GET', '/api/users/me/api-key'));
  t.equal(match?.route, 'key');
  t.same(match?.params, { id: 'me' });
});

t.test('parameters are percent-decoded', async (t) => {
  const match = found(usersRouter().find('GET', '/api/users/a%20b%2Fc'));
  t.same(match?.params, { id: 'a b/c' });
});

t.test('a parameter with broken percent-encoding is kept as sent instead of throwing', async (t) => {
  const match = found(usersRouter().find('GET', '/api/users/%E0%A4%A'));
  t.same(match?.params, { id: '%E0%A4%A' });
});

t.test('a known path with an unregistered method reports the allowed methods', async (t) => {
  t.same(usersRouter().find('PATCH', '/api/users'), { kind: 'method-not-allowed', allow: ['GET', 'POST'] });
  t.same(usersRouter().find('POST', '/api/users/1'), { kind: 'method-not-allowed', allow: ['GET', 'PUT', 'DELETE'] });
});

t.test('one trailing slash is ignored', async (t) => {
  t.equal(found(usersRouter().find('GET', '/api/users/'))?.route, 'list');
  t.equal(found(usersRouter().find('PUT', '/api/users/x/password/'))?.route, 'password');
});

t.test('an unknown path is not found', async (t) => {
  const router = usersRouter();
  t.same(router.find('GET', '/api/nothing'), { kind: 'not-found' });
  t.same(router.find('GET', '/api/users/x/unknown'), { kind: 'not-found' });
  t.same(router.find('GET', '/api'), { kind: 'not-found' }, 'an inner node without routes is not a resource');
});

t.test('an empty segment never fills a parameter', async (t) => {
  t.same(usersRouter().find('GET', '/api/users//api-key'), { kind: 'not-found' });
});

t.test('registering the same method and path twice throws', async (t) => {
  const router = usersRouter();
  t.throws(() => router.add('GET', '/api/users/{id}', 'again'), /duplicate route GET \/api\/users\/\{id\}/);
});

t.test('two parameter names at the same position throw', async (t) => {
  const router = usersRouter();
  t.throws(() => router.add('POST', '/api/users/{userId}/api-key', 'x'), /conflicting parameter names/);
});

t.test('a path seen before is answered the same way, with parameters the caller may change', async (t) => {
  const router = usersRouter();
  const path = '/api/users/0b6f3c62-9d1e-4a55-8f0e-7d2a3c4b5e6f';
  const first = found(router.find('GET', path));
  first!.params.id = 'changed by the caller';
  const again = found(router.find('GET', path));
  t.equal(again?.route, 'get');
  t.same(again?.params, { id: '0b6f3c62-9d1e-4a55-8f0e-7d2a3c4b5e6f' }, 'the remembered parameters were not touched');
  t.equal(found(router.find('PUT', path))?.route, 'update', 'another method on the same path');
  t.same(router.find('PATCH', path), { kind: 'method-not-allowed', allow: ['GET', 'PUT', 'DELETE'] });
});

t.test('a route added after lookups takes its paths over from the remembered ones', async (t) => {
  const router = usersRouter();
  t.equal(found(router.find('GET', '/api/users/export'))?.route, 'get', 'a parameter at first');
  router.add('GET', '/api/users/export', 'export');
  t.equal(found(router.find('GET', '/api/users/export'))?.route, 'export');
});

t.test('any number of different paths keeps matching (the memory of them is bounded and starts over)', async (t) => {
  const router = usersRouter();
  const ids = Array.from({ length: 2000 }, (_, i) => `0b6f3c62-9d1e-4a55-8f0e-${i.toString(16).padStart(12, '0')}`);
  let wrong = 0;
  for (const id of ids) if (found(router.find('GET', `/api/users/${id}`))?.params.id !== id) wrong++;
  for (const id of ids.slice(0, 10)) if (found(router.find('PUT', `/api/users/${id}`))?.params.id !== id) wrong++;
  t.equal(wrong, 0);
  t.ok((router as unknown as { recent: Map<string, unknown> }).recent.size <= 512, 'at most 512 paths remembered');
});
