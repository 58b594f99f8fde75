// Transport and now-playing over whichever MPD process runs now: one operation at a time, MPD's queue and the model together.
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import {
  PlaybackError,
  type PlaybackEvent,
  type PlaybackSnapshot,
  type PlaybackState,
  type PlaybackStatus,
  type Recovery,
  stoppedStatus,
} from '../playback.js';
import type { MpdConnection } from './connection.js';
import { addEntries, prepareEntries } from './loader.js';
import { command, field, MpdAck } from './protocol.js';
import { type Entry, QueueModel, type Skip } from './queue-model.js';
import { failedUri, isPlaybackFailure, type MpdStatus, parseStatus, skipReason } from './status.js';

export interface PlayerLink {
  clock: Clock;
  /** The music folder's real path (known once the engine started). */
  musicRoot(): string;
  /** Hosts (`host`) and places (`host:port`) streams may come from besides the usual ones (see parseTrackUri). */
  streamHosts: readonly string[];
  tickMs: number;
  connection(): Promise<MpdConnection>;
  update(relativeFolder: string): Promise<void>;
  emit(event: PlaybackEvent): void;
  log(level: 'debug' | 'warn', msg: string): void;
}

/** A seek MPD cannot make yet (see seekWhenReady) is tried again this often, this far apart (2 s in all). */
const SEEK_ATTEMPTS = 20;
export const SEEK_RETRY_MS = 100;
/** What MPD answers a seek it can make a moment later (see seekWhenReady). */
const SEEK_NOT_YET = /not seekable|decoder is dead/i;

const STATES: readonly PlaybackState[] = ['playing', 'paused', 'stopped'];
const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** Turns what MPD refused into the contract's error; PlaybackErrors pass as they are. */
function asPlaybackError(err: unknown): Error {
  if (err instanceof MpdAck) return new PlaybackError('failed', err.message);
  return err as Error;
}

function checkIndex(index: number, length: number, what: string, inclusiveEnd = false): void {
  const max = inclusiveEnd ? length : length - 1;
  if (!Number.isInteger(index) || index < 0 || index > max) {
    throw new PlaybackError('bad-request', `${what} must be a whole number from 0 to ${max}, got ${index}`);
  }
}

function checkPosition(positionMs: number): void {
  if (!Number.isFinite(positionMs) || positionMs < 0)
    throw new PlaybackError('bad-request', `a position must be a number of milliseconds from 0, got ${positionMs}`);
}

export class MpdPlayer {
  private readonly model = new QueueModel();
  private current: PlaybackStatus;
  private chain: Promise<unknown> = Promise.resolve();
  private refreshQueued = false;
  private tickTimer: unknown = undefined;
  /**
   * The queue as of the last read, with `current`: what a crash gives back. An operation that dies with mpd half
   * way (the model already changed, MPD's queue not yet) must not be what is restored.
   */
  private checkpoint: { queue: string[]; detachedNext: number | null } = { queue: [], detachedNext: null };
  /** Whether the last start asked for a paused track: going on past one that failed keeps that. */
  private startPaused = false;

  constructor(private readonly link: PlayerLink) {
    this.current = stoppedStatus(link.clock.now());
  }

  status(): PlaybackStatus {
    return this.current;
  }

  /** Reads MPD's state soon (an idle event said it changed); requests while one waits are one read. */
  refresh(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    this.exclusive(() => {
      this.refreshQueued = false;
      return this.observe(false);
    }).catch((err: Error) => this.link.log('debug', `reading MPD's status failed: ${err.message}`));
  }

  async playQueue(uris: string[], index = 0, positionMs = 0): Promise<void> {
    if (!Array.isArray(uris) || uris.length === 0)
      throw new PlaybackError('bad-request', 'a queue to play needs at least one URI');
    checkIndex(index, uris.length, 'the index to play from');
    checkPosition(positionMs);
    const entries = await prepareEntries(uris, this.link.musicRoot(), this.link.streamHosts);
    return this.exclusive(async () => {
      const connection = await this.load(entries);
      await this.startAt(connection, index, positionMs, false);
      await this.observe(false);
    });
  }

  play(index: number): Promise<void> {
    return this.exclusive(async () => {
      checkIndex(index, this.model.length, 'the index to play');
      await this.startAt(await this.link.connection(), index, 0, false);
      await this.observe(false);
    });
  }

  pause(): Promise<void> {
    return this.simple(['pause 1']);
  }

  resume(): Promise<void> {
    return this.exclusive(async () => {
      const connection = await this.link.connection();
      const s = await this.read(connection);
      this.startPaused = false;
      const from = s.state === 'stopped' ? this.model.restartPoint(s.songId) : null;
      if (s.state === 'paused') await this.send(connection, ['pause 0']);
      else if (from && 'songId' in from) {
        this.model.moved();
        await this.send(connection, [command('playid', from.songId)]);
      } else if (from) await this.startAt(connection, from.index, 0, false);
      await this.observe(false);
    });
  }

  stopPlayback(): Promise<void> {
    return this.simple(['stop']);
  }

  next(): Promise<void> {
    return this.simple(['next'], () => {
      this.model.moved();
      this.startPaused = false;
    });
  }

  previous(): Promise<void> {
    return this.simple(['previous'], () => {
      this.model.moved(true);
      this.startPaused = false;
    });
  }

  async seek(positionMs: number): Promise<void> {
    checkPosition(positionMs);
    return this.exclusive(async () => {
      const connection = await this.link.connection();
      const s = await this.read(connection);
      if (s.songId === null || s.state === 'stopped')
        throw new PlaybackError('bad-request', 'nothing is playing: start a track before seeking');
      if (s.durationMs === null) throw new PlaybackError('bad-request', 'this stream has no duration to seek in');
      if (positionMs > s.durationMs)
        throw new PlaybackError(
          'bad-request',
          `the track is ${s.durationMs} ms long: seek to a position from 0 to ${s.durationMs}`,
        );
      await this.seekWhenReady(connection, positionMs);
      await this.observe(false);
    });
  }

  async replaceQueue(uris: string[], at: { current: number } | { next: number }): Promise<void> {
    if (!Array.isArray(uris)) throw new PlaybackError('bad-request', 'the queue must be a list of URIs');
    if ('current' in at) checkIndex(at.current, uris.length, 'the index of the playing track');
    else checkIndex(at.next, uris.length, 'the index to play next', true);
    const entries = await prepareEntries(uris, this.link.musicRoot(), this.link.streamHosts);
    return this.exclusive(async () => {
      const connection = await this.link.connection();
      const [statusPairs = []] = await connection.request(['status']);
      const songId = Number(field(statusPairs, 'songid') ?? Number.NaN);
      const songPos = Number(field(statusPairs, 'song') ?? Number.NaN);
      const length = Number(field(statusPairs, 'playlistlength') ?? 0);
      if (field(statusPairs, 'state') === 'stop' || !Number.isInteger(songId)) {
        await this.load(entries);
        this.model.park('current' in at ? at.current : at.next < entries.length ? at.next : null);
      } else {
        await this.keepPlaying(connection, entries, at, { songId, songPos, length });
      }
      await this.observe(false);
    });
  }

  async snapshot(): Promise<PlaybackSnapshot> {
    return this.exclusive(async () => {
      await this.observe(false);
      return this.saved();
    });
  }

  async restore(snapshot: PlaybackSnapshot): Promise<void> {
    if (!snapshot || !Array.isArray(snapshot.queue))
      throw new PlaybackError('bad-request', 'a snapshot needs its queue (a list of URIs)');
    if (!STATES.includes(snapshot.state))
      throw new PlaybackError(
        'bad-request',
        `a snapshot's state is playing, paused or stopped, got ${String(snapshot.state)}`,
      );
    if (snapshot.index !== null) checkIndex(snapshot.index, snapshot.queue.length, "the snapshot's index");
    checkPosition(snapshot.positionMs);
    const entries = await prepareEntries(snapshot.queue, this.link.musicRoot(), this.link.streamHosts);
    return this.exclusive(async () => {
      const connection = await this.load(entries);
      if (snapshot.index === null || snapshot.state === 'stopped') this.model.park(snapshot.index);
      else await this.startAt(connection, snapshot.index, snapshot.positionMs, snapshot.state === 'paused');
      await this.observe(false);
    });
  }

  /**
   * The engine process went away: what it was playing (the position carried forward to now), for recover().
   * The status says stopped until the engine is back.
   */
  engineDown(): PlaybackSnapshot {
    this.stopTicks();
    const saved = this.saved();
    this.publish({ ...this.current, state: 'stopped', positionAt: this.link.clock.now() }, false);
    return saved;
  }

  /** Gives `saved` back to a freshly started MPD (whose queue is empty). */
  async recover(saved: PlaybackSnapshot): Promise<{ recovery: Recovery; detail?: string }> {
    this.model.replace([]);
    if (saved.queue.length === 0) {
      await this.exclusive(() => this.observe(false));
      return { recovery: 'fresh' };
    }
    try {
      await this.restore(saved);
      return { recovery: 'restored' };
    } catch (err) {
      this.model.replace([]);
      await this.exclusive(() => this.observe(false)).catch(() => undefined);
      return { recovery: 'lost', detail: `the playback could not be given back: ${(err as Error).message}` };
    }
  }

  /** Stops the position ticks (the engine stops). */
  halt(): void {
    this.stopTicks();
  }

  /** Runs `fn` after every earlier operation: MPD's queue and the model change together, never interleaved. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run.catch((err: unknown) => {
      throw asPlaybackError(err);
    });
  }

  private simple(commands: string[], before?: () => void): Promise<void> {
    return this.exclusive(async () => {
      const connection = await this.link.connection();
      before?.();
      await this.send(connection, commands);
      await this.observe(false);
    });
  }

  /** Sends commands; a track that failed to start is noted as a skip (MPD went on), anything else is thrown. */
  private async send(connection: MpdConnection, commands: string[]): Promise<void> {
    try {
      await connection.request(commands);
    } catch (err) {
      if (err instanceof MpdAck && isPlaybackFailure(err.text)) this.noteFailure(err.text);
      else throw err;
    }
  }

  /** Empties MPD's queue and fills it with `entries`. */
  private async load(entries: Entry[]): Promise<MpdConnection> {
    const connection = await this.link.connection();
    await connection.request(['clear']);
    this.model.replace([]);
    await addEntries(this.context(connection), entries, null);
    this.model.replace(entries);
    return connection;
  }

  /** Plays entry `index` (the first playable one from there) at `positionMs`, paused if asked. */
  private async startAt(connection: MpdConnection, index: number, positionMs: number, paused: boolean): Promise<void> {
    this.model.starting(index);
    this.startPaused = paused;
    for (let target = this.model.firstQueued(index); target !== null; target = this.model.firstQueued(target + 1)) {
      const id = this.model.mpdIdAt(target)!;
      const at = target === index ? positionMs : 0;
      const seekStart = at > 0 || paused;
      try {
        const start = seekStart ? command('seekid', id, seconds(at)) : command('playid', id);
        await connection.request(paused ? [start, 'pause 1'] : [start]);
        this.model.startedAt(target, paused);
        return;
      } catch (err) {
        if (!(err instanceof MpdAck) || !isPlaybackFailure(err.text)) throw err;
        this.noteFailure(err.text);
        // After a track that fails to play MPD goes on by itself; after one that fails to start at a position it
        // may stay (observe() goes on then) or go on unpaused: the next one is started from here instead.
        if (!seekStart) return;
      }
    }
    // Nothing from there on can play: each is reported and playback stops.
    await connection.request(['stop']);
    await this.report(connection, this.model.passRest());
  }

  /**
   * MPD answers "Not seekable" until the decoder of a track that just started has opened it, and "Decoder is dead"
   * when its decoder (faster than playback) is done with the track and not yet on the next one, near a track's end:
   * asked again a little later, a bounded number of times.
   */
  private async seekWhenReady(connection: MpdConnection, positionMs: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send(connection, [command('seekcur', seconds(positionMs))]);
      } catch (err) {
        if (!(err instanceof MpdAck) || !SEEK_NOT_YET.test(err.text) || attempt >= SEEK_ATTEMPTS) throw err;
      }
      await new Promise<void>((resolve) => this.link.clock.setTimeout(resolve, SEEK_RETRY_MS));
    }
  }

  /** The replace that keeps the playing song: everything else in MPD's queue goes, the new entries go around it. */
  private async keepPlaying(
    connection: MpdConnection,
    entries: Entry[],
    at: { current: number } | { next: number },
    mpd: { songId: number; songPos: number; length: number },
  ): Promise<void> {
    const deletes = [];
    if (mpd.songPos + 1 < mpd.length) deletes.push(`delete ${mpd.songPos + 1}:`);
    if (mpd.songPos > 0) deletes.push(`delete 0:${mpd.songPos}`);
    if (deletes.length) await connection.request(deletes);
    const split = 'current' in at ? at.current : at.next;
    const oldUri = this.current.uri ?? '';
    if ('current' in at) entries[at.current]!.mpdId = mpd.songId;
    this.model.replace([]);
    await addEntries(this.context(connection), entries.slice(0, split), 0);
    await addEntries(this.context(connection), entries.slice(split), null);
    this.model.replace(entries);
    this.model.keep(at, { mpdId: mpd.songId, uri: oldUri });
  }

  private context(connection: MpdConnection) {
    return { connection, update: (folder: string) => this.link.update(folder) };
  }

  private async read(connection: MpdConnection): Promise<MpdStatus> {
    const [status = [], song = []] = await connection.request(['status', 'currentsong']);
    return parseStatus(status, song);
  }

  /**
   * Reads MPD, reports the tracks it passed over, publishes the status; `tick` adds a position event. A read of MPD
   * past a track that failed and not yet on the next one publishes nothing: a later read says where it went. Runs
   * inside exclusive().
   */
  private async observe(tick: boolean): Promise<void> {
    const connection = await this.link.connection();
    const s = await this.read(connection);
    const errorAt = s.error !== null ? this.noteFailure(s.error) : null;
    const { model } = this;
    const leftOut = model.detachedEnded(s.songId);
    // The left-out track has ended: it leaves MPD's queue too, so previous() never lands on it (gone already is fine).
    if (leftOut !== null) await connection.request([command('deleteid', leftOut)]).catch(() => undefined);
    const reading = model.read(s, this.link.clock.now(), errorAt);
    if (!reading.settled && reading.goOnAfter !== null) {
      // MPD stopped because a track failed. It goes on by itself unless the track was started at a position (or a
      // seek came before it): either way the engine goes on past it, and reads again.
      await this.report(connection, model.passFailed(reading.goOnAfter));
      await this.startAt(connection, reading.goOnAfter + 1, 0, this.startPaused);
      return this.observe(tick);
    }
    if (s.error !== null && !reading.keepError) await connection.request(['clearerror']);
    if (!reading.settled) return;
    await this.report(connection, reading.skips);
    this.checkpoint = { queue: model.uris(), detachedNext: model.detachedNext() };
    this.publish(reading.status, tick);
  }

  /** Reports the entries playback passed over that MPD failed (see logCaughtUp for those its words are late for). */
  private async report(connection: MpdConnection, skips: Skip[]): Promise<void> {
    if (this.model.awaitsWord()) await this.logCaughtUp(connection);
    this.emitSkips(this.model.explain(skips));
  }

  /**
   * MPD writes a track's failure to its log before it moves on, but the log (its stderr) and the socket are read
   * apart, so a reply that shows the move can be handled before the line. After one more reply from MPD and the
   * end of that turn of the event loop, every line written before the read has been taken in.
   */
  private async logCaughtUp(connection: MpdConnection): Promise<void> {
    await connection.request(['ping']);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private publish(next: PlaybackStatus, tick: boolean): void {
    const before = this.current;
    this.current = next;
    const changed = (Object.keys(next) as Array<keyof PlaybackStatus>).some(
      (key) => key !== 'positionMs' && key !== 'positionAt' && next[key] !== before[key],
    );
    if (changed) this.link.emit({ type: 'playback', status: next });
    else if (tick && next.state === 'playing')
      this.link.emit({
        type: 'position',
        positionMs: next.positionMs,
        durationMs: next.durationMs,
        at: next.positionAt,
      });
    if (next.state === 'playing') this.startTicks();
    else this.stopTicks();
  }

  private startTicks(): void {
    if (this.tickTimer !== undefined) return;
    this.tickTimer = this.link.clock.setTimeout(() => {
      this.tickTimer = undefined;
      this.exclusive(() => this.observe(true)).catch((err: Error) =>
        this.link.log('debug', `position tick failed: ${err.message}`),
      );
    }, this.link.tickMs);
  }

  private stopTicks(): void {
    this.link.clock.clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
  }

  /**
   * MPD's log said a track failed: noted on its entry if it is one still ahead (a late line about a reported one is
   * dropped). The log and the socket are read apart: when the line is about the entry a paused start began with, the
   * read that settled the start may have come before it, and MPD, paused, tells nothing more; so it is read again.
   */
  mpdSaid(message: string): void {
    const at = this.noteFailure(message, false);
    if (at !== null && this.model.startedPausedAt(at)) this.refresh();
  }

  /**
   * MPD's words about a track that failed: noted on its entry (its index is returned), or a fault when they name no
   * track of ours.
   */
  private noteFailure(message: string, faultIfUnknown = true): number | null {
    const uri = failedUri(message);
    const cause = { reason: skipReason(message), detail: message };
    const root = this.link.musicRoot();
    const names = (target: string) => uri !== null && (target === uri || path.join(root, target) === uri);
    const at = this.model.noteFailure(names, cause);
    if (at !== null || !faultIfUnknown) return at;
    const detached = this.model.detachedUri();
    if (detached !== null && uri !== null) {
      this.link.emit({ type: 'skipped', index: null, uri: detached, reason: cause.reason, detail: message });
      return null;
    }
    this.link.log('warn', `MPD: ${message}`);
    this.link.emit({ type: 'fault', detail: message });
    return null;
  }

  private emitSkips(skips: Skip[]): void {
    for (const skip of skips) {
      this.link.emit({
        type: 'skipped',
        index: skip.index,
        uri: skip.uri,
        reason: skip.cause.reason,
        detail: skip.cause.detail,
      });
    }
  }

  /** The snapshot of the last read, its position carried forward while playing. */
  private saved(): PlaybackSnapshot {
    const s = this.current;
    const { queue, detachedNext: next } = this.checkpoint;
    if (next !== null && s.index === null) {
      // The left-out track is not given back: the track after it is, from its start.
      return next < queue.length
        ? { queue, index: next, positionMs: 0, state: s.state }
        : { queue, index: null, positionMs: 0, state: 'stopped' };
    }
    if (s.index === null) return { queue, index: null, positionMs: 0, state: 'stopped' };
    // A stream has no position to come back to: it starts again live.
    if (s.durationMs === null) return { queue, index: s.index, positionMs: 0, state: s.state };
    const elapsed = s.state === 'playing' ? this.link.clock.now() - s.positionAt : 0;
    return {
      queue,
      index: s.index,
      positionMs: Math.max(0, Math.min(s.durationMs, Math.round(s.positionMs + elapsed))),
      state: s.state,
    };
  }
}
