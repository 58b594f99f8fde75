// The same-work baseline of the volume PUT: bare uWS doing its durable work (check, rows, commit, SSE) without azcd.
//
// What a `PUT /api/players/{id}/volume` must do on any machine, written as plainly as a correct uWS server can:
// read and check the body (exactly one of "volume" 0..1 and "delta" -1..1, nothing else), find the player, move its
// zones by one factor within each zone's max_volume, update the zone rows and the player's stored volume with
// better-sqlite3 in one transaction per event-loop turn at the daemon's durability (WAL, locking_mode=EXCLUSIVE,
// synchronous=NORMAL for device state, as daemon/store/db.ts sets them), answer 204 once that turn is committed,
// and write the same three event frames (two zone.volumeChanged, one player.volumeChanged) to every open event
// stream, one write per stream per turn. No authentication, routing framework, access log or driver: that is
// the daemon's overhead, which the target (≥ 0.7 of this) allows for.
import type Database from 'better-sqlite3';
import { type HttpResponse, loadUws } from '../../daemon/http/uws.js';
import { openSqlite } from '../../daemon/store/sqlite.js';
import { serve, startOnConfig } from './lib/server-child.js';

export interface SameWorkConfig {
  /** A copy of the daemon's database after the benchmark's fixture: the same rows, schema and pages. */
  dbFile: string;
  /** Length of the X-Request-Id the daemon sends, so answers have the same size. */
  requestIdLength: number;
  /** The `<run>-` part of the daemon's event ids, so frames have the same size. */
  eventIdPrefix: string;
}

interface Zone {
  id: string;
  volume: number;
  maxVolume: number;
}

interface Player {
  id: string;
  volume: number;
  zones: Zone[];
}

interface Stream {
  res: HttpResponse;
  outbox: string;
  closed: boolean;
}

const MAX_BODY = 64 * 1024;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The daemon rounds computed volumes to this resolution (daemon/domain/audio/volume-rule.ts). */
const RESOLUTION = 10_000;
const round = (v: number) => Math.round(v * RESOLUTION) / RESOLUTION;

const problem = (status: string, detail: string) =>
  JSON.stringify({ type: 'about:blank', title: status.slice(4), status: Number(status.slice(0, 3)), detail });

/** What is wrong with a volume body, or undefined when it is exactly one of "volume" and "delta" in range. */
function bodyProblem(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object';
  for (const key of Object.keys(body)) if (key !== 'volume' && key !== 'delta') return `unknown field "${key}"`;
  const { volume, delta } = body as { volume?: unknown; delta?: unknown };
  if ((volume === undefined) === (delta === undefined)) return 'send exactly one of "volume" and "delta"';
  if (volume !== undefined && !(typeof volume === 'number' && volume >= 0 && volume <= 1))
    return `"volume" must be a number from 0 to 1, got ${JSON.stringify(volume)}`;
  if (delta !== undefined && !(typeof delta === 'number' && delta >= -1 && delta <= 1))
    return `"delta" must be a number from -1 to 1, got ${JSON.stringify(delta)}`;
  return undefined;
}

/** The daemon's pragmas (daemon/store/db.ts): the database held alone, WAL, NORMAL for high-rate device state. */
function openStore(file: string): Database.Database {
  const db = openSqlite(file);
  db.pragma('busy_timeout = 0');
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('journal_mode = WAL');
  db.exec('BEGIN EXCLUSIVE; COMMIT');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.prepare('PRAGMA synchronous = NORMAL').run();
  return db;
}

function loadPlayers(db: Database.Database): Map<string, Player> {
  const players = new Map<string, Player>();
  for (const row of db.prepare('SELECT id, volume FROM players').all() as Array<{ id: string; volume: number }>)
    players.set(row.id, { id: row.id, volume: row.volume, zones: [] });
  const zones = db
    .prepare('SELECT id, volume, max_volume, player_id FROM zones WHERE player_id IS NOT NULL ORDER BY id')
    .all() as Array<{ id: string; volume: number; max_volume: number; player_id: string }>;
  for (const row of zones)
    players.get(row.player_id)?.zones.push({ id: row.id, volume: row.volume, maxVolume: row.max_volume });
  return players;
}

function start(config: SameWorkConfig): void {
  const { module: uws, source } = loadUws();
  const db = openStore(config.dbFile);
  const players = loadPlayers(db);
  const setZoneVolume = db.prepare('UPDATE zones SET volume = ? WHERE id = ?');
  const setPlayerVolume = db.prepare('UPDATE players SET volume = ? WHERE id = ?');
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const requestId = 'b'.repeat(config.requestIdLength);

  // The turn's work: the latest value per row, the answers waiting for the commit, the frames per stream.
  const zoneWrites = new Map<string, Zone>();
  const playerWrites = new Map<string, Player>();
  let waiting: Array<{ res: HttpResponse; aborted: boolean }> = [];
  const streams = new Set<Stream>();
  let eventSeq = 0;
  let turnScheduled = false;
  const stats = { commits: 0, rowWrites: 0, answered: 0, frames: 0 };

  const post = (data: string) => {
    const frame = `id: ${config.eventIdPrefix}${++eventSeq}\ndata: ${data}\n\n`;
    stats.frames++;
    for (const stream of streams) stream.outbox += frame;
  };

  const endOfTurn = () => {
    turnScheduled = false;
    let failed: unknown;
    try {
      begin.run();
      for (const zone of zoneWrites.values()) setZoneVolume.run(zone.volume, zone.id);
      for (const player of playerWrites.values()) setPlayerVolume.run(player.volume, player.id);
      commit.run();
      stats.commits++;
      stats.rowWrites += zoneWrites.size + playerWrites.size;
    } catch (err) {
      failed = err;
      if (db.inTransaction) rollback.run();
    }
    zoneWrites.clear();
    playerWrites.clear();
    const answers = waiting;
    waiting = [];
    for (const w of answers) {
      if (w.aborted) continue;
      stats.answered++;
      w.res.cork(() => {
        if (failed) {
          w.res.writeStatus('500 Internal Server Error').end(problem('500 Internal Server Error', String(failed)));
          return;
        }
        w.res.writeStatus('204 No Content');
        w.res.writeHeader('X-Request-Id', requestId);
        w.res.writeHeader('X-Content-Type-Options', 'nosniff');
        w.res.endWithoutBody();
      });
    }
    for (const stream of streams) {
      if (!stream.outbox || stream.closed) continue;
      const chunk = stream.outbox;
      stream.outbox = '';
      stream.res.cork(() => stream.res.write(chunk));
    }
  };

  const refuse = (res: HttpResponse, status: string, detail: string) =>
    res.cork(() => {
      res.writeStatus(status);
      res.writeHeader('Content-Type', 'application/problem+json');
      res.end(problem(status, detail));
    });

  const app = uws.App();
  app.get('/api/stream/events', (res) => {
    const stream: Stream = { res, outbox: '', closed: false };
    res.onAborted(() => {
      stream.closed = true;
      streams.delete(stream);
    });
    res.cork(() => {
      res.writeStatus('200 OK');
      res.writeHeader('Content-Type', 'text/event-stream; charset=utf-8');
      res.writeHeader('Cache-Control', 'no-cache, no-transform');
      res.writeHeader('X-Request-Id', requestId);
      res.write('retry: 2000\n\n');
    });
    streams.add(stream);
  });

  app.put('/api/players/:id/volume', (res, req) => {
    const id = req.getParameter(0)?.toLowerCase() ?? '';
    const type = req.getHeader('content-type');
    const pending = { res, aborted: false };
    res.onAborted(() => (pending.aborted = true));
    if (!type.startsWith('application/json')) {
      refuse(res, '415 Unsupported Media Type', 'send the body as application/json');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (pending.aborted) return;
      size += chunk.byteLength;
      if (size > MAX_BODY) return refuse(res, '413 Content Too Large', `the body may be at most ${MAX_BODY} bytes`);
      // uWS reuses the chunk's memory after this callback: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
      } catch {
        return refuse(res, '400 Bad Request', 'the body is not JSON');
      }
      const wrong = bodyProblem(body);
      if (wrong) return refuse(res, '400 Bad Request', wrong);
      const player = ID.test(id) ? players.get(id) : undefined;
      if (!player) return refuse(res, '404 Not Found', `no player ${id}`);
      const { volume, delta } = body as { volume?: number; delta?: number };
      const zones = player.zones;
      let sum = 0;
      for (const zone of zones) sum += zone.volume;
      const average = zones.length ? round(sum / zones.length) : player.volume;
      const target = volume ?? Math.min(1, Math.max(0, round(average + delta!)));
      const factor = zones.length && average !== 0 ? target / average : null;
      let changed = false;
      for (const zone of zones) {
        const next = Math.max(0, Math.min(factor === null ? target : round(zone.volume * factor), zone.maxVolume));
        if (next === zone.volume) continue;
        zone.volume = next;
        zoneWrites.set(zone.id, zone);
        post(JSON.stringify({ type: 'zone.volumeChanged', payload: { zoneId: zone.id, volume: next } }));
        changed = true;
      }
      if (changed || !zones.length) {
        let total = 0;
        for (const zone of zones) total += zone.volume;
        const now = zones.length ? round(total / zones.length) : target;
        if (now !== player.volume) {
          player.volume = now;
          playerWrites.set(player.id, player);
          post(JSON.stringify({ type: 'player.volumeChanged', payload: { playerId: player.id, volume: now } }));
        }
      }
      waiting.push(pending);
      if (!turnScheduled) {
        turnScheduled = true;
        setImmediate(endOfTurn);
      }
    });
  });
  serve(app, uws, source, 'same-work baseline');
  process.on('message', (message: { type: string }) => {
    if (message?.type === 'stats') process.send?.({ type: 'stats', ...stats, streams: streams.size });
  });
  process.on('SIGTERM', () => {
    db.close();
    process.exit(0);
  });
}

startOnConfig<SameWorkConfig>(start);
