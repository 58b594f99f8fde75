// Announcements: a sound played on some zones through a stream player, then everything put back. They queue and play
// one at a time; the queue is capped per user and in all, so one user cannot hold the appliance's speakers.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import { sameOutput, type ZoneApplier } from '../audio/index.js';
import type { AnnouncementView, Caller, DomainEvent, EventBus, Writer } from '../shared/index.js';
import {
  announcementFor,
  asWriter,
  canSeePlayer,
  canSeeZone,
  conflict,
  invalid,
  isAdmin,
  notFound,
  throttled,
} from '../shared/index.js';
import { chooseLegs, type Leg } from './announcement-legs.js';
import { type RunDeps, runAnnouncement } from './announcement-run.js';
import { type AnnouncementRequest, ended, type Job, newView } from './announcement-view.js';
import { engineCall } from './errors.js';

export type AnnouncementLimits = Pick<Config['limits'], 'announcementsQueued' | 'announcementsPerUser'>;

/** Announcements that ended, kept for GET /api/announcements/{id}. */
const KEPT_ENDED = 50;

export interface AnnouncementDeps extends Omit<RunDeps, 'started'> {
  zoneStates: Pick<ZoneApplier, 'apply' | 'captureSome'>;
  bus: EventBus;
  limits: AnnouncementLimits;
}

export class Announcements {
  private readonly queue: Job[] = [];
  private current: Job | undefined;
  private readonly endedJobs: Job[] = [];
  private running = false;
  private stopped = false;
  private idle: Promise<void> = Promise.resolve();
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: AnnouncementDeps) {
    this.unsubscribe = deps.bus.subscribe('announcements', (event) => this.playerChanged(event));
  }

  /**
   * Queues an announcement on zones the caller may change (400 for unknown ones), through stream players it may use
   * (400 for one named that it may not), of a sound that is there now (400 otherwise); 409 when none of the zones can
   * answer or no stream player the caller may use feeds any of them. Answers at once, queued; the events tell when it
   * starts and ends.
   */
  async announce(
    caller: Caller,
    request: AnnouncementRequest,
    recheck: () => Caller = () => caller,
  ): Promise<AnnouncementView> {
    const writer = asWriter(caller);
    const zoneIds = [...new Set(request.zoneIds)];
    const { targets, skipped } = this.deps.zoneStates.captureSome(writer, zoneIds);
    if (targets.length === 0)
      throw conflict(
        `none of these zones can answer now: ${skipped.map((s) => `${s.zoneId}: ${s.reason}`).join('; ')}`,
      );
    const requested = this.requestedPlayer(writer, request.playerId);
    const { legs } = chooseLegs(
      writer,
      targets.map((target) => this.deps.repo.zone(target.zoneId)!),
      requested,
      {
        players: () => this.deps.repo.players(),
        zonesOfPlayer: (id) => this.deps.repo.zonesOfPlayer(id),
        // Whether a player's MPD runs is asked when the announcement's turn comes.
        up: () => true,
        running: false,
        playing: (id) => this.deps.now.playing(id),
        amplifierName: this.deps.amplifierName,
      },
    );
    if (legs.length === 0) throw conflict(noPlayerFor(writer));
    await this.checkSound(request.uri, legs);
    this.checkRoom(writer);
    const job: Job = {
      view: newView(randomUUID(), { ...request, zoneIds }, this.deps.clock.now()),
      userId: writer.userId,
      requested,
      recheck,
      cuts: new Map(),
      taken: new Map(),
      lost: new Map(),
      cancelled: false,
    };
    this.queue.push(job);
    this.publish('announcement.queued', job);
    this.pump();
    return announcementFor(writer, job.view);
  }

  /** The announcements that wait or play, whose zones the caller may all see. */
  list(caller: Caller): AnnouncementView[] {
    const jobs = this.current ? [this.current, ...this.queue] : [...this.queue];
    return jobs.filter((job) => this.visible(caller, job)).map((job) => announcementFor(caller, job.view));
  }

  get(caller: Caller, id: string): AnnouncementView {
    return announcementFor(caller, this.find(caller, id).view);
  }

  /** Takes a waiting announcement off the queue, or cuts a playing one short (everything is put back then). */
  cancel(caller: Caller, id: string): AnnouncementView {
    const writer = asWriter(caller);
    const job = this.find(writer, id);
    if (ended(job.view.status)) throw conflict(`announcement ${job.view.id} has ended already (${job.view.status})`);
    job.cancelled = true;
    const at = this.queue.indexOf(job);
    if (at >= 0) {
      this.queue.splice(at, 1);
      this.finish(job, 'cancelled', 'cancelled before it played');
    } else {
      job.view.detail = 'cancelled while it played';
      for (const cut of [...job.cuts.values()]) cut(null);
    }
    return announcementFor(writer, job.view);
  }

  /** Drops what waits and cuts what plays (the daemon stops); resolves once what played is put back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    for (const job of this.queue.splice(0)) this.finish(job, 'cancelled', 'the daemon stopped');
    if (this.current) {
      this.current.cancelled = true;
      for (const cut of [...this.current.cuts.values()]) cut(null);
    }
    await this.idle;
  }

  /**
   * The player a request names: one the caller may use (any other is an unknown id, a 400 as for zones it may not
   * see) that is a stream player.
   */
  private requestedPlayer(caller: Writer, playerId: string | undefined): string | undefined {
    if (playerId === undefined) return undefined;
    const player = this.deps.repo.player(playerId);
    if (!player || !canSeePlayer(caller, playerId)) {
      const why = isAdmin(caller)
        ? 'must name a stream player, or be left out'
        : 'must name a stream player assigned to you, or be left out';
      throw invalid(`unknown player id ${playerId}: "playerId" ${why}`, { playerId: [why] });
    }
    if (player.output_kind === null)
      throw invalid(`player ${playerId} is not a stream player`, {
        playerId: ['must name a stream player (one with an output)'],
      });
    return playerId;
  }

  /**
   * Refuses (400) a sound the appliance does not play: another scheme, a path outside the music folder, or a file that
   * is not in the music folder now (a mistyped name would otherwise fail only when its turn comes). Read through the
   * MPD of any stream player that is up, else of the first one the announcement would use (started if it must be).
   */
  private async checkSound(uri: string, legs: readonly Leg[]): Promise<void> {
    const { engines } = this.deps;
    const engine =
      engines.playerIds.map((id) => engines.up(id)).find((up) => up !== undefined) ??
      (await engines.ready(legs[0]!.playerId));
    const sound = await engineCall(() => engine.library.resolve(uri), 'uri');
    if (sound.kind === 'file' && !sound.exists) {
      const why = 'is not a file in the music folder: check its name, or pick one from the library (GET /api/library)';
      throw invalid(`"uri" ${uri} ${why}`, { uri: [why] });
    }
  }

  /**
   * A stream player deleted, or given another output, while it plays the announcement: the announcement ends there at
   * once (its MPD is gone), and its zones are put back.
   */
  private playerChanged(event: DomainEvent): void {
    const job = this.current;
    if (!job) return;
    if (event.type === 'player.deleted') this.lose(job, event.payload.playerId, 'was deleted', true);
    else if (event.type === 'player.updated') {
      const { id, output } = event.payload.player;
      const had = job.taken.get(id);
      if (had && !sameOutput(had.output, output))
        this.lose(job, id, output ? 'was given another output' : 'is no stream player any more', false);
    }
  }

  private lose(job: Job, playerId: string, what: string, deleted: boolean): void {
    const taken = job.taken.get(playerId);
    if (!taken || job.lost.has(playerId)) return;
    const why = `the stream player on amplifier "${taken.amplifier}" ${what} while the announcement played`;
    job.lost.set(playerId, { why, deleted });
    job.cuts.get(playerId)?.(why);
  }

  private pump(): void {
    if (this.running || this.stopped) return;
    const job = this.queue.shift();
    if (!job) return;
    this.running = true;
    this.current = job;
    this.idle = runAnnouncement(job, {
      ...this.deps,
      started: (started) => this.publish('announcement.started', started),
    })
      .catch((err: Error) => {
        job.view.status = 'failed';
        job.view.detail = err.message;
      })
      .then(() => {
        this.current = undefined;
        this.running = false;
        this.finish(job, job.view.status, job.view.detail);
        this.pump();
      });
  }

  private finish(job: Job, status: AnnouncementView['status'], detail: string | null): void {
    job.view.status = ended(status) ? status : 'failed';
    job.view.detail = detail;
    job.view.endedAt = new Date(this.deps.clock.now()).toISOString();
    this.endedJobs.push(job);
    if (this.endedJobs.length > KEPT_ENDED) this.endedJobs.shift();
    this.publish('announcement.ended', job);
  }

  /** 429 when the caller, or everyone together, has as many announcements waiting as the limits allow. */
  private checkRoom(caller: Caller): void {
    const { announcementsQueued, announcementsPerUser } = this.deps.limits;
    const retry = Math.ceil(this.deps.maxMs / 1000);
    if (this.queue.length >= announcementsQueued)
      throw throttled(`${this.queue.length} announcements are waiting already; try again when one has played`, retry);
    const mine = this.queue.filter((job) => job.userId === caller.userId).length;
    if (mine >= announcementsPerUser)
      throw throttled(`you have ${mine} announcements waiting already; try again when one has played`, retry);
  }

  private find(caller: Caller, id: string): Job {
    const job = [this.current, ...this.queue, ...this.endedJobs].find((candidate) => candidate?.view.id === id);
    if (!job || !this.visible(caller, job)) throw notFound(`no announcement with id ${id}`);
    return job;
  }

  private visible(caller: Caller, job: Job): boolean {
    return job.view.zoneIds.every((id) => canSeeZone(caller, id));
  }

  private publish(type: 'announcement.queued' | 'announcement.started' | 'announcement.ended', job: Job): void {
    this.deps.bus.publish({
      type,
      payload: { announcement: { ...job.view, skipped: [...job.view.skipped], kept: [...job.view.kept] } },
    });
  }
}

/** Why no stream player can play an announcement on the zones asked for (none the caller may use feeds them). */
function noPlayerFor(caller: Caller): string {
  if (isAdmin(caller))
    return 'no stream player feeds these zones\' amplifier: create one whose input is on it (POST /api/players with an "output")';
  return (
    "no stream player assigned to you feeds these zones' amplifier without also feeding rooms outside your assignments: " +
    'ask an administrator to assign you one'
  );
}
