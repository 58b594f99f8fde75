// The two front doors of the pipeline, the uWS adapter and inject(), give a handler the same request headers: a feature
// that reads one must not pass its in-process tests and do nothing over a socket.

import { Type } from '@sinclair/typebox';
import t, { type Test } from 'tap';
import type { InjectResponse } from '../../daemon/http/inject.js';
import {
  CAPTURED_HEADERS,
  PIPELINE_HEADERS,
  type RequestHeaders,
  ROUTE_HEADERS,
  type Route,
  route,
} from '../../daemon/http/route.js';
import { HttpServer } from '../../daemon/http/server.js';
import { createLogger } from '../../daemon/log.js';
import { client, type Reply } from '../helpers/client.js';

/** Paths on each side of every prefix the adapter could treat apart: the API, its event streams, the dashboard. */
const NAMING_ALL = ['/api/headers-seen', '/api/stream/headers-seen', '/headers-seen'];
const NAMING_NONE = '/api/headers-unnamed';
/** No route answers it: the fallback (the dashboard's files in the daemon) does. */
const NO_ROUTE = '/a-dashboard-file';
const BODY = { any: 'thing' };

/** A route on `path` that answers with the headers its handler was given. */
function reflecting(path: string, headers: Route['headers']): Route {
  return route({
    method: 'PUT',
    path,
    access: 'public',
    summary: 'Echoes the request headers its handler sees',
    tags: ['test'],
    headers,
    body: Type.Object({}, { additionalProperties: true }),
    responses: { 200: { description: 'the headers' } },
    handle: (req) => ({ status: 200, body: req.headers }),
  });
}

/**
 * A value for every captured header: its own name, so a header given to the handler under another's name shows, except
 * where the wire gives it a meaning the client sets itself (the Host, the body's length and type).
 */
function headersToSend(host: string): Record<string, string> {
  const wire: Partial<RequestHeaders> = {
    host,
    'content-length': String(JSON.stringify(BODY).length),
    'content-type': 'application/json',
  };
  return Object.fromEntries(CAPTURED_HEADERS.map((name) => [name, wire[name] ?? `sent-${name}`]));
}

t.test('a handler sees the same request headers over a socket as through inject()', async (t) => {
  const server = new HttpServer({
    logger: createLogger('silent'),
    maxBodyBytes: 64 * 1024,
    authenticate: () => null,
    fallback: (req, res) => {
      res.writeStatus('200 OK');
      res.writeHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(req.headers));
      return true;
    },
  });
  server.add([...NAMING_ALL.map((path) => reflecting(path, ROUTE_HEADERS)), reflecting(NAMING_NONE, undefined)]);
  const port = await server.listen('127.0.0.1', 0);
  t.teardown(() => server.close());
  const sent = headersToSend(`127.0.0.1:${port}`);
  const overSocket = client(`http://127.0.0.1:${port}`);

  /** The headers the handler saw through each door, for the same request (a GET sends no body, so no length). */
  const seen = async (t: Test, method: 'GET' | 'PUT', path: string) => {
    const body = method === 'PUT' ? BODY : undefined;
    const { 'content-length': _length, ...bodiless } = sent;
    const headers = method === 'PUT' ? sent : bodiless;
    const socket = await overSocket.call(method, path, { headers, body });
    const injected = await server.inject({ method, path, headers, body });
    for (const reply of [socket, injected] as Array<Reply | InjectResponse>) t.equal(reply.status, 200, 'answered');
    t.same(Object.keys(socket.body).sort(), [...CAPTURED_HEADERS].sort(), 'every captured header, and only those');
    return { socket: socket.body, injected: injected.body };
  };

  for (const path of NAMING_ALL) {
    t.test(`a route on ${path} that names every header it may get gets each as sent, through both doors`, async (t) => {
      const { socket, injected } = await seen(t, 'PUT', path);
      t.same(socket, injected, 'the socket and inject() give the handler the same headers');
      t.same(socket, sent, 'each header as the client sent it');
    });
  }

  t.test('a route that names none of them gets the pipeline headers only, through both doors', async (t) => {
    const { socket, injected } = await seen(t, 'PUT', NAMING_NONE);
    t.same(socket, injected, 'the socket and inject() give the handler the same headers');
    const pipelineOnly = Object.fromEntries(
      CAPTURED_HEADERS.map((name) => [name, (PIPELINE_HEADERS as readonly string[]).includes(name) ? sent[name] : '']),
    );
    t.same(socket, pipelineOnly, 'the headers it did not name are empty');
  });

  t.test('a request no route answers gets every header, through both doors', async (t) => {
    const { socket, injected } = await seen(t, 'GET', NO_ROUTE);
    t.same(socket, injected, 'the socket and inject() give the fallback the same headers');
    t.same(socket, { ...sent, 'content-length': '' }, 'each header as the client sent it');
  });
});
