// The HTTP layer seen from outside: routing errors, body rules, request ids, OpenAPI and log redaction.

import net from 'node:net';
import t from 'tap';
import { client } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { WAIT_MS, within } from '../helpers/wait-for.js';

t.test('http layer', async (t) => {
  const d = await startTestDaemon(t);
  const api = client(d.base, d.adminKey);

  t.test('an unknown route is a 404 problem', async (t) => {
    const res = await api.get('/api/nothing-here');
    t.equal(res.status, 404);
    t.match(res.headers.get('content-type'), /application\/problem\+json/);
    t.match(res.body, { type: String, title: 'Not Found', status: 404, detail: String, instance: '/api/nothing-here' });
  });

  t.test('a known path with the wrong method is 405 with Allow', async (t) => {
    const res = await api.call('PATCH', '/api/players');
    t.equal(res.status, 405);
    t.equal(res.headers.get('allow'), 'GET, POST');
  });

  t.test('a body that is not JSON content is 415', async (t) => {
    const res = await api.call('POST', '/api/playlists', { raw: 'name=x', contentType: 'text/plain' });
    t.equal(res.status, 415);
  });

  t.test('malformed JSON is a 400 problem', async (t) => {
    const res = await api.call('POST', '/api/playlists', { raw: '{"name": ' });
    t.equal(res.status, 400);
    t.match(res.body.detail, /not valid JSON/);
  });

  t.test('a JSON body that is not an object is a 400', async (t) => {
    const res = await api.call('POST', '/api/playlists', { raw: '[1,2]' });
    t.equal(res.status, 400);
  });

  t.test('a body over 64 KiB is a 413 and creates nothing', async (t) => {
    const before = (await api.get('/api/playlists')).body.length;
    const res = await api.post('/api/playlists', { name: 'big', tracks: [], pad: 'x'.repeat(70 * 1024) });
    t.equal(res.status, 413);
    t.equal((await api.get('/api/playlists')).body.length, before);
  });

  t.test('a chunked body without Content-Length is cut off at 64 KiB with a 413', async (t) => {
    const port = Number(new URL(d.base).port);
    const socket = net.connect(port, '127.0.0.1');
    t.teardown(() => socket.destroy());
    let reply = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (reply += chunk));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      `POST /api/playlists HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${d.adminKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 6; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    await within(closed, WAIT_MS, 'the server to close the connection after its 413');
    t.match(reply, /^HTTP\/1\.1 413 /);
    t.match(reply, /exceeds the limit of 65536 bytes/);
  });

  t.test('a missing body on a route that needs one is a 400', async (t) => {
    const res = await api.call('POST', '/api/playlists');
    t.equal(res.status, 400);
  });

  t.test('validation errors name the field', async (t) => {
    const res = await api.post('/api/playlists', { name: 42 });
    t.equal(res.status, 400);
    t.ok(res.body.errors.name, 'errors has the offending field');
  });

  t.test('a non-UUID path id is a 400', async (t) => {
    const res = await api.get('/api/players/not-a-uuid');
    t.equal(res.status, 400);
    t.ok(res.body.errors.id);
  });

  t.test('every response carries a request id, and a sane incoming one is kept', async (t) => {
    const res = await api.get('/api/health', { headers: { 'x-request-id': 'trace-123' } });
    t.equal(res.headers.get('x-request-id'), 'trace-123');
    const other = await api.get('/api/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    t.not(other.headers.get('x-request-id'), 'bad id with spaces');
    t.ok(other.headers.get('x-request-id'));
  });

  t.test('health answers without a credential and without secrets', async (t) => {
    const res = await api.get('/api/health', { key: '' });
    t.equal(res.status, 200);
    t.match(res.body, {
      status: 'ok',
      version: String,
      uptimeS: Number,
      drivers: [{ name: 'simulated', online: true }],
    });
    t.notMatch(res.text, /svc_/);
  });

  t.test('the OpenAPI document is generated from the route schemas', async (t) => {
    const res = await api.get('/api/openapi.json', { key: '' });
    t.equal(res.status, 200);
    t.equal(res.body.openapi, '3.1.0');
    const volume = res.body.paths['/api/players/{id}/volume'].put;
    t.same(volume.requestBody.content['application/json'].schema.properties.volume.maximum, 1);
    t.ok(res.body.paths['/api/stream/events'].get, 'documents the event stream');
    t.same(Object.keys(res.body.components.securitySchemes).sort(), ['ApiKeyHeader', 'ApiKeyQuery', 'Bearer']);
    const eventTypes = res.body.components.schemas.Event.anyOf.map(
      (e: { properties: { type: { const: string } } }) => e.properties.type.const,
    );
    for (const type of [
      'player.volumeChanged',
      'player.zonesChanged',
      'zone.mutedChanged',
      'playlist.changed',
      'hardware.status',
      'user.changed',
      'stream.reset',
    ]) {
      t.ok(eventTypes.includes(type), `documents the ${type} event`);
    }
    t.notOk(JSON.stringify(res.body).includes('errorMessage'), 'private error texts are not published');
  });

  t.test('/description.xml is a UPnP device description with the persisted UDN', async (t) => {
    const res = await api.get('/description.xml', { key: '' });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /xml/);
    t.match(res.text, /<deviceType>urn:schemas-upnp-org:device:Basic:1<\/deviceType>/);
    t.match(res.text, /<deviceType>urn:audio-zone-control-local:device:AudioZoneController:1<\/deviceType>/);
    t.match(res.text, new RegExp(`<UDN>${d.daemon.services.udn}</UDN>`));
    t.match(d.daemon.services.udn, /^uuid:[0-9a-f-]{36}$/);
    t.match(res.text, /<presentationURL>\/<\/presentationURL>/);
    t.match(res.text, /<modelNumber>\d+\.\d+\.\d+<\/modelNumber>/);
  });

  t.test('access logs never contain an apiKey query value', async (t) => {
    await api.get(`/api/users/me?apiKey=${encodeURIComponent(d.adminKey)}`, { key: '' });
    const line = d.logs.find((l) => l.includes('/api/users/me?apiKey='));
    t.ok(line, 'the request was logged');
    t.notMatch(d.logs.join('\n'), d.adminKey);
  });
});
