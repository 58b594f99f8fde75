// The bare uWS baseline: the daemon's uWS binary (loadUws) answering the same bytes with no framework around it.
import { scrypt } from 'node:crypto';
import { type HttpResponse, loadUws } from '../../daemon/http/uws.js';
import { serve, startOnConfig } from './lib/server-child.js';

export interface BaselineConfig {
  /** GET routes answered with fixed bytes: the daemon's own response bodies for the same paths. */
  canned: Array<{ path: string; body: string; contentType: string }>;
  /** uWS patterns (`/api/players/:id/volume`) that read and parse a JSON body, then answer 204. */
  jsonPut: string[];
  /** POST route that runs the same scrypt as a password login, then answers `body`. */
  login?: { path: string; body: string; scrypt: { N: number; r: number; p: number; keylen: number }; salt: string };
  /** Length of the X-Request-Id the daemon sends, so responses have the same size. */
  requestIdLength: number;
  /**
   * Serve GET /api/stream/events and make each player volume PUT broadcast the same three frames the daemon sends
   * (player.volumeChanged and two zone.volumeChanged), written per stream as the daemon writes them.
   */
  sse?: { zoneIds: [string, string] };
}

const MAX_BODY = 64 * 1024;

/** Reads the whole body, copying each chunk (uWS reuses them), as any correct uWS handler must. */
function readJson(res: HttpResponse, done: (value: unknown) => void, fail: () => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    size += chunk.byteLength;
    if (size > MAX_BODY) return fail();
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return;
    try {
      done(JSON.parse(Buffer.concat(chunks, size).toString('utf8')));
    } catch {
      fail();
    }
  });
}

function start(config: BaselineConfig): void {
  const { module: uws, source } = loadUws();
  const app = uws.App();
  const requestId = 'b'.repeat(config.requestIdLength);
  const streams = new Set<HttpResponse>();
  let eventId = 0;
  const broadcast = (data: string) => {
    const frame = `id: ${++eventId}\ndata: ${data}\n\n`;
    for (const res of streams) res.cork(() => res.write(frame));
  };
  if (config.sse) {
    app.get('/api/stream/events', (res) => {
      res.onAborted(() => streams.delete(res));
      res.onWritable(() => true);
      res.cork(() => {
        res.writeStatus('200 OK');
        res.writeHeader('Content-Type', 'text/event-stream; charset=utf-8');
        res.writeHeader('Cache-Control', 'no-cache, no-transform');
        res.writeHeader('X-Request-Id', requestId);
        res.write('retry: 2000\n\n');
      });
      streams.add(res);
    });
  }
  for (const route of config.canned) {
    app.get(route.path, (res) => {
      res.cork(() => {
        res.writeStatus('200 OK');
        res.writeHeader('X-Request-Id', requestId);
        res.writeHeader('X-Content-Type-Options', 'nosniff');
        res.writeHeader('Content-Type', route.contentType);
        res.end(route.body);
      });
    });
  }
  for (const pattern of config.jsonPut) {
    app.put(pattern, (res, req) => {
      const id = req.getParameter(0);
      let aborted = false;
      res.onAborted(() => (aborted = true));
      readJson(
        res,
        (body) => {
          if (aborted) return;
          const volume = (body as { volume?: unknown })?.volume;
          const ok = typeof id === 'string' && typeof volume === 'number';
          if (ok && config.sse && pattern.startsWith('/api/players/')) {
            broadcast(JSON.stringify({ type: 'player.volumeChanged', payload: { playerId: id, volume } }));
            for (const zoneId of config.sse.zoneIds)
              broadcast(JSON.stringify({ type: 'zone.volumeChanged', payload: { zoneId, volume } }));
          }
          res.cork(() => {
            res.writeStatus(ok ? '204 No Content' : '400 Bad Request');
            res.writeHeader('X-Request-Id', requestId);
            res.writeHeader('X-Content-Type-Options', 'nosniff');
            res.endWithoutBody();
          });
        },
        () => {
          if (!aborted) res.cork(() => res.writeStatus('400 Bad Request').end());
        },
      );
    });
  }
  if (config.login) {
    const login = config.login;
    const salt = Buffer.from(login.salt, 'base64url');
    app.post(login.path, (res) => {
      let aborted = false;
      res.onAborted(() => (aborted = true));
      readJson(
        res,
        (body) => {
          const password = String((body as { password?: unknown })?.password ?? '');
          const { N, r, p, keylen } = login.scrypt;
          scrypt(password, salt, keylen, { N, r, p, maxmem: 64 * 1024 * 1024 }, () => {
            if (aborted) return;
            res.cork(() => {
              res.writeStatus('200 OK');
              res.writeHeader('X-Request-Id', requestId);
              res.writeHeader('Content-Type', 'application/json');
              res.end(login.body);
            });
          });
        },
        () => {
          if (!aborted) res.cork(() => res.writeStatus('400 Bad Request').end());
        },
      );
    });
  }
  serve(app, uws, source, 'baseline');
}

startOnConfig<BaselineConfig>(start);
