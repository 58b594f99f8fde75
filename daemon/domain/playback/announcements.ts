// Announcements: a sound played on some zones through a stream player, then everything put back. They queue and play
// one at a time; the queue is capped per user and in all, so one user cannot hold the appliance's speakers.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import { announcementFor, asWriter, canSeeZone, conflict, invalid, notFound, throttled, type AnnouncementView, type Caller, type EventBus } from '../shared/index.js';
import type { ZoneApplier } from '../audio/index.js';
import { engineCall } from './errors.js';
import { runAnnouncement, type RunDeps } from './announcement-run.js';
import { ended, newView, type AnnouncementRequest, type Job } from './announcement-view.js';

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

  constructor(private readonly deps: AnnouncementDeps) {}

  /**
   * Queues an announcement on zones the caller may change (400 for unknown ones, 409 when none can answer or no
   * stream player feeds any of them). Answers at once, queued; the events tell when it starts and ends.
   */
  async announce(caller: Caller, request: AnnouncementRequest, recheck: () => Caller = () => caller): Promise<AnnouncementView> {
    const writer = asWriter(caller);
    const zoneIds = [...new Set(request.zoneIds.map((id) => id.toLowerCase()))];
    const { targets, skipped } = this.deps.zoneStates.captureSome(writer, zoneIds);
    if (targets.length === 0) throw conflict(`none of these zones can answer now: ${skipped.map((s) => `${s.zoneId}: ${s.reason}`).join('; ')}`);
    const requested = request.playerId?.toLowerCase();
    const streams = this.deps.repo.players().filter((player) => player.output_kind !== null);
    if (requested !== undefined && !streams.some((player) => player.id === requested)) {
      throw invalid(`player ${request.playerId} is not a stream player`, { playerId: ['must name a stream player (one with an output)'] });
    }
    const fed = targets.filter((target) => {
      const zone = this.deps.repo.zone(target.zoneId)!;
      return streams.some((player) => player.input_amplifier === zone.output_amplifier && player.input_driver === zone.output_driver);
    });
    if (fed.length === 0) {
      throw conflict("no stream player feeds these zones' amplifier: create one whose input is on it (POST /api/players with an \"output\")");
    }
    const checker = streams.map((player) => this.deps.engines.up(player.id)).find((engine) => engine !== undefined);
    if (checker) await engineCall(() => checker.library.resolve(request.uri), 'uri');
    this.checkRoom(writer);
    const job: Job = {
      view: newView(randomUUID(), { ...request, zoneIds }, this.deps.clock.now()),
      userId: writer.userId,
      requested,
      recheck,
      cuts: new Set(),
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
      for (const cut of [...job.cuts]) cut();
    }
    return announcementFor(writer, job.view);
  }

  /** Drops what waits and cuts what plays (the daemon stops); resolves once what played is put back. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const job of this.queue.splice(0)) this.finish(job, 'cancelled', 'the daemon stopped');
    if (this.current) {
      this.current.cancelled = true;
      for (const cut of [...this.current.cuts]) cut();
    }
    await this.idle;
  }

  private pump(): void {
    if (this.running || this.stopped) return;
    const job = this.queue.shift();
    if (!job) return;
    this.running = true;
    this.current = job;
    this.idle = runAnnouncement(job, { ...this.deps, started: (started) => this.publish('announcement.started', started) })
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
    if (this.queue.length >= announcementsQueued) throw throttled(`${this.queue.length} announcements are waiting already; try again when one has played`, retry);
    const mine = this.queue.filter((job) => job.userId === caller.userId).length;
    if (mine >= announcementsPerUser) throw throttled(`you have ${mine} announcements waiting already; try again when one has played`, retry);
  }

  private find(caller: Caller, rawId: string): Job {
    const id = rawId.toLowerCase();
    const job = [this.current, ...this.queue, ...this.endedJobs].find((candidate) => candidate?.view.id === id);
    if (!job || !this.visible(caller, job)) throw notFound(`no announcement with id ${rawId}`);
    return job;
  }

  private visible(caller: Caller, job: Job): boolean {
    return job.view.zoneIds.every((id) => canSeeZone(caller, id));
  }

  private publish(type: 'announcement.queued' | 'announcement.started' | 'announcement.ended', job: Job): void {
    this.deps.bus.publish({ type, payload: { announcement: { ...job.view, skipped: [...job.view.skipped], kept: [...job.view.kept] } } });
  }
}
