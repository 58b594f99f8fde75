// One announcement played: the zones' state and the players' playback saved, the zones brought to the announcement
// without pops, the sound played to its end (or cut off), then every zone nobody changed meanwhile and every
// interrupted playback put back.
import type { PlaybackEngine, PlaybackSnapshot } from '../../../drivers/playback.js';
import type { Logger } from '../../log.js';
import type { AudioRepo, ZoneRow } from '../../store/audio-repo.js';
import { outputOf, type ZoneApplier, type ZoneTarget } from '../audio/index.js';
import { asWriter, type Clock, DomainError, type Writer } from '../shared/index.js';
import { chooseLegs, type Leg } from './announcement-legs.js';
import type { Job } from './announcement-view.js';
import type { StreamEngines } from './engines.js';
import { fromPlaybackError } from './errors.js';
import type { NowPlaying } from './now-playing.js';
import type { Transport } from './transport.js';

export interface RunDeps {
  repo: AudioRepo;
  zoneStates: Pick<ZoneApplier, 'apply'>;
  engines: StreamEngines;
  now: NowPlaying;
  transport: Pick<Transport, 'follow'>;
  clock: Clock;
  /** The longest an announcement plays before it is cut off. */
  maxMs: number;
  amplifierName(key: string, driver: string): string;
  /** The announcement began to play (its view is up to date). */
  started(job: Job): void;
  log: Logger;
}

/** What an interrupted player had: put back afterwards. */
interface Held {
  leg: Leg;
  engine: PlaybackEngine;
  snapshot: PlaybackSnapshot;
}

/** How long the end waits for a player's MPD that restarted during the announcement before giving up on its playback. */
const RECOVERY_WAIT_MS = 40_000;

/** Plays one announcement; never throws: what went wrong is the job's status and detail. */
export async function runAnnouncement(job: Job, deps: RunDeps): Promise<void> {
  const { view } = job;
  let writer: Writer;
  let zones: Array<Readonly<ZoneRow>>;
  try {
    writer = asWriter(job.recheck());
    zones = presentZones(job, writer, deps.repo);
  } catch (err) {
    return fail(job, err);
  }
  const { legs, skipped } = chooseLegs(writer, zones, job.requested, {
    players: () => deps.repo.players(),
    zonesOfPlayer: (id) => deps.repo.zonesOfPlayer(id),
    up: (id) => deps.engines.up(id) !== undefined,
    running: true,
    playing: (id) => deps.now.playing(id),
    amplifierName: deps.amplifierName,
  });
  view.skipped.push(...skipped);
  const held: Held[] = [];
  for (const leg of legs) {
    try {
      held.push(await hold(job, leg, deps));
    } catch (err) {
      const why = `its stream player cannot play now: ${err instanceof DomainError ? err.detail : (err as Error).message}`;
      view.skipped.push(...leg.zoneIds.map((zoneId) => ({ zoneId, reason: why })));
    }
  }
  if (held.length === 0) return fail(job, new Error('no zone can play it: see skipped'));
  legs.splice(0, legs.length, ...held.map((h) => h.leg));
  view.playerIds = legs.map((leg) => leg.playerId);

  const touched = [...new Set(legs.flatMap((leg) => [...leg.zoneIds, ...leg.muted]))];
  const before = touched
    .map((id) => deps.repo.zone(id))
    .filter((zone): zone is Readonly<ZoneRow> => zone !== undefined);
  let asSet = new Map<string, Readonly<ZoneRow>>();
  try {
    const outcome = await deps.zoneStates.apply(writer, announced(before, legs, view.volume));
    view.skipped.push(...outcome.skipped);
    asSet = new Map(outcome.applied.map((id) => [id, { ...deps.repo.zone(id)! }]));
    const playing = await Promise.all(held.map((h) => play(job, h.leg.playerId, h.engine, deps)));
    view.status = 'playing';
    view.startedAt = new Date(deps.clock.now()).toISOString();
    deps.started(job);
    const results = await Promise.all(playing.map((p) => p.end));
    const played = results.filter((result) => result === null).length;
    const failures = results.filter((result): result is string => result !== null);
    if (job.cancelled) view.status = 'cancelled';
    else view.status = played > 0 ? 'done' : 'failed';
    if (failures.length) view.detail = failures.join('; ');
  } catch (err) {
    view.status = 'failed';
    view.detail = err instanceof DomainError ? err.detail : (err as Error).message;
  } finally {
    await putZonesBack(writer, before, asSet, deps, job);
    for (const h of held) await giveBack(h, deps, job);
  }
}

/** The zones of the request that still exist for the caller; the rest are skipped with why. */
function presentZones(job: Job, writer: Writer, repo: AudioRepo): Array<Readonly<ZoneRow>> {
  const zones: Array<Readonly<ZoneRow>> = [];
  for (const id of job.view.zoneIds) {
    const zone = repo.zone(id);
    if (zone && (writer.role === 'Admin' || writer.zoneIds.has(id))) zones.push(zone);
    else job.view.skipped.push({ zoneId: id, reason: 'the zone was deleted, or is no longer in your assignments' });
  }
  return zones;
}

/**
 * Takes a player for the announcement once the operations on it before are done: its playback saved, its transport
 * held, its output noted (a player deleted or given another output meanwhile is lost to the announcement).
 */
function hold(job: Job, leg: Leg, deps: RunDeps): Promise<Held> {
  return deps.now.serially(leg.playerId, async () => {
    const engine = await deps.engines.ready(leg.playerId);
    const player = deps.repo.player(leg.playerId);
    const output = player && outputOf(player);
    if (!player || !output || deps.engines.engineOf(leg.playerId) !== engine)
      throw new Error('it was deleted or changed just now');
    job.taken.set(leg.playerId, { output, amplifier: deps.amplifierName(player.input_amplifier, player.input_driver) });
    await deps.now.announce(leg.playerId, job.view.id);
    const snapshot = await engine
      .snapshot()
      .catch(() => ({ queue: [], index: null, positionMs: 0, state: 'stopped' as const }));
    if (snapshot.state !== 'stopped') await engine.stopPlayback().catch(() => undefined);
    return { leg, engine, snapshot };
  });
}

/** The zones as the announcement wants them: its zones on, routed to their player, at its volume; the players' other rooms muted. */
function announced(zones: readonly Readonly<ZoneRow>[], legs: readonly Leg[], volume: number): ZoneTarget[] {
  const playerOf = new Map(legs.flatMap((leg) => leg.zoneIds.map((id) => [id, leg.playerId] as const)));
  return zones.map((zone) => {
    const playerId = playerOf.get(zone.id);
    if (playerId) return { zoneId: zone.id, power: true, volume, muted: false, playerId };
    return { ...targetOf(zone), muted: true };
  });
}

const targetOf = (zone: Readonly<ZoneRow>): ZoneTarget => ({
  zoneId: zone.id,
  power: zone.power === 1,
  volume: zone.volume,
  muted: zone.muted === 1,
  playerId: zone.player_id,
});

/**
 * Starts the announcement on one player; resolves once the player took it, with `end`: null when it played to its end
 * (or was cut off: too long, or cancelled), or why it failed (the player lost meanwhile among them).
 */
function play(
  job: Job,
  playerId: string,
  engine: PlaybackEngine,
  deps: RunDeps,
): Promise<{ end: Promise<string | null> }> {
  let finish!: (failure: string | null) => void;
  let playing = false;
  const end = new Promise<string | null>((resolve) => {
    let done = false;
    finish = (failure) => {
      if (done) return;
      done = true;
      off();
      deps.clock.clearTimeout(timer);
      job.cuts.delete(playerId);
      // Cut short: silence the player before the zones go back.
      void engine
        .stopPlayback()
        .catch(() => undefined)
        .then(() => resolve(failure));
    };
  });
  const off = engine.onEvent((event) => {
    if (event.type === 'skipped') finish(`${event.uri} could not play (${event.reason}): ${event.detail}`);
    else if (event.type === 'engine' && !event.up) finish(`the player's MPD went down: ${event.detail}`);
    else if (event.type === 'fault') finish(`the player's output failed: ${event.detail}`);
    else if (event.type === 'playback' && event.status.state === 'playing') playing = true;
    else if (event.type === 'playback' && event.status.state === 'stopped' && playing) finish(null);
  });
  const timer = deps.clock.setTimeout(() => {
    job.view.detail = `cut off after ${deps.maxMs} ms (playback.announcementMaxMs)`;
    finish(null);
  }, deps.maxMs);
  job.cuts.set(playerId, finish);
  const lost = job.lost.get(playerId);
  if (job.cancelled || lost) {
    finish(lost?.why ?? null);
    return Promise.resolve({ end });
  }
  return engine.playUri(job.view.uri).then(
    () => {
      if (engine.status().state === 'playing') playing = true;
      else finish(null);
      return { end };
    },
    (err: unknown) => {
      finish(fromPlaybackError(err).message);
      return { end };
    },
  );
}

/**
 * Every zone the announcement set goes back to what it was, unless it changed since (a keypad, the API, a scene, a
 * sleep timer): the newer change wins and the zone is listed in `kept`. A zone deleted meanwhile is listed too. A
 * player deleted meanwhile detached and muted its zones: that is no newer change, and a zone it fed before goes back
 * detached and muted, as the deletion leaves it.
 */
async function putZonesBack(
  writer: Writer,
  before: readonly Readonly<ZoneRow>[],
  asSet: ReadonlyMap<string, Readonly<ZoneRow>>,
  deps: RunDeps,
  job: Job,
): Promise<void> {
  const kept = job.view.kept;
  const deleted = new Set([...job.lost].filter(([, loss]) => loss.deleted).map(([playerId]) => playerId));
  const targets: ZoneTarget[] = [];
  for (const zone of before) {
    const announced = asSet.get(zone.id);
    if (!announced) continue;
    const set =
      announced.player_id !== null && deleted.has(announced.player_id)
        ? { ...announced, player_id: null, muted: 1 }
        : announced;
    const now = deps.repo.zone(zone.id);
    if (!now) kept.push({ zoneId: zone.id, reason: 'the zone was deleted while the announcement played' });
    else if (
      now.power !== set.power ||
      now.muted !== set.muted ||
      now.volume !== set.volume ||
      now.player_id !== set.player_id
    ) {
      kept.push({
        zoneId: zone.id,
        reason: 'changed while the announcement played (keypad, API, scene or timer): the newer change is kept',
      });
    } else
      targets.push(
        zone.player_id !== null && !deps.repo.player(zone.player_id)
          ? { ...targetOf(zone), playerId: null, muted: true }
          : targetOf(zone),
      );
  }
  if (targets.length === 0) return;
  try {
    const outcome = await deps.zoneStates.apply(writer, targets);
    kept.push(...outcome.skipped.map((s) => ({ zoneId: s.zoneId, reason: `could not be put back: ${s.reason}` })));
  } catch (err) {
    const why = err instanceof DomainError ? err.detail : (err as Error).message;
    deps.log.warn({ err: why }, 'an announcement could not put its zones back');
    kept.push(...targets.map((target) => ({ zoneId: target.zoneId, reason: `could not be put back: ${why}` })));
  }
}

/**
 * The player's queue, track, position and state from before, and its transport free again. A player lost meanwhile
 * gets nothing back: deleted, it is gone; given another output, its MPD started afresh (as any output change does).
 */
function giveBack(held: Held, deps: RunDeps, job: Job): Promise<void> {
  const { leg, engine, snapshot } = held;
  return deps.now.serially(leg.playerId, async () => {
    if (job.lost.has(leg.playerId)) {
      deps.now.released(leg.playerId);
      await deps.now.announcementOver(leg.playerId);
      deps.now.refresh(leg.playerId);
      return;
    }
    let restored = false;
    try {
      if (!engine.up) await whenUp(engine, deps.clock);
      await engine.restore(snapshot);
      restored = true;
    } catch (err) {
      const why = `the playback of player ${leg.playerId} could not be given back: ${(err as Error).message}`;
      job.view.detail = job.view.detail ? `${job.view.detail}; ${why}` : why;
    }
    const stale = deps.now.givenBack(leg.playerId, restored);
    await deps.now.announcementOver(leg.playerId);
    deps.now.refresh(leg.playerId);
    if (stale) void deps.transport.follow(leg.playerId).catch(() => undefined);
  });
}

/** Resolves when the engine is up again (it restarts by itself), or rejects after RECOVERY_WAIT_MS. */
function whenUp(engine: PlaybackEngine, clock: Clock): Promise<void> {
  return new Promise((resolve, reject) => {
    const off = engine.onEvent((event) => {
      if (event.type !== 'engine' || !event.up) return;
      off();
      clock.clearTimeout(timer);
      resolve();
    });
    const timer = clock.setTimeout(() => {
      off();
      reject(new Error(`its MPD was not back within ${RECOVERY_WAIT_MS / 1000} s`));
    }, RECOVERY_WAIT_MS);
  });
}

function fail(job: Job, err: unknown): void {
  job.view.status = 'failed';
  job.view.detail = err instanceof DomainError ? err.detail : (err as Error).message;
}
