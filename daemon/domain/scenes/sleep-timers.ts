// Sleep timers: powers zones off when their sleepUntil comes. One timer, for the earliest zone due, rescheduled from
// the stored timers whenever one changes; no polling. Timers live in the store, so they survive a restart.

import type { Caller, Clock, EventBus, ZoneView } from '../shared/index.js';
import { invalid, systemClock } from '../shared/index.js';

/** The zones' sleep state the timers schedule from (audio's ZoneSleep). */
export interface SleepAudio {
  /** Stores (or with null clears) a zone's sleep timer; a zone that is off cannot get one. */
  set(caller: Caller, zoneId: string, untilMs: number | null): ZoneView;
  /**
   * Powers the zone off if its timer is due at `now`, clearing the timer. Returns why it could not (the zone cannot
   * answer: the timer is cleared all the same), or undefined.
   */
  expired(zoneId: string, now: number): string | undefined;
  /** Every zone with a timer set. */
  timers(): Array<{ zoneId: string; sleepUntil: number }>;
}

/** The longest sleep timer, in minutes (one day). */
export const MAX_SLEEP_MINUTES = 24 * 60;

/** setTimeout's longest delay; a later due time is reached in several waits. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export class SleepTimers {
  private handle: unknown;
  private unsubscribe: (() => void) | undefined;
  /** Zones already handed to expired() for this due time: never fired again, so a zone that stays due cannot spin. */
  private readonly spent = new Map<string, number>();
  private firing = false;

  constructor(
    private readonly audio: SleepAudio,
    private readonly bus: EventBus,
    private readonly log: (level: 'info' | 'warn', fields: Record<string, unknown>, message: string) => void = () => {
      // No logger given (tests): nothing to say.
    },
    private readonly clock: Clock = systemClock,
  ) {}

  /** Follows timer changes and schedules the stored ones; a timer already due fires at once (on the next turn). */
  start(): void {
    // A restore (configuration.replaced) replaced the stored timers wholesale.
    this.unsubscribe = this.bus.subscribe(
      'sleep-timers',
      (event) => {
        if (event.type === 'zone.sleepChanged' || event.type === 'zone.deleted') this.reschedule();
        else if (event.type === 'configuration.replaced') this.reschedule();
      },
      { internal: true },
    );
    this.reschedule();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.cancel();
  }

  /** Sets a zone's timer `minutes` from now (0 cancels it); returns the zone. */
  set(caller: Caller, zoneId: string, minutes: number): ZoneView {
    if (!Number.isFinite(minutes) || minutes < 0 || minutes > MAX_SLEEP_MINUTES) {
      throw invalid(`"minutes" must be a number from 0 to ${MAX_SLEEP_MINUTES}, got ${minutes}`, {
        minutes: [`must be from 0 to ${MAX_SLEEP_MINUTES}`],
      });
    }
    const until = minutes === 0 ? null : this.clock.now() + Math.round(minutes * 60_000);
    return this.audio.set(caller, zoneId, until);
  }

  /** Sets the one timer for the earliest zone due, from the stored timers (also after they were replaced wholesale). */
  reschedule(): void {
    if (this.firing || !this.unsubscribe) return;
    this.cancel();
    const stored = this.audio.timers();
    for (const [zoneId, until] of this.spent) {
      if (!stored.some((timer) => timer.zoneId === zoneId && timer.sleepUntil === until)) this.spent.delete(zoneId);
    }
    const due = stored.filter((timer) => this.spent.get(timer.zoneId) !== timer.sleepUntil);
    if (due.length === 0) return;
    const next = Math.min(...due.map((timer) => timer.sleepUntil));
    const delay = Math.min(Math.max(0, next - this.clock.now()), MAX_DELAY_MS);
    this.handle = this.clock.setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.handle = undefined;
    const now = this.clock.now();
    this.firing = true;
    try {
      for (const timer of this.audio.timers()) {
        if (timer.sleepUntil > now || this.spent.get(timer.zoneId) === timer.sleepUntil) continue;
        this.spent.set(timer.zoneId, timer.sleepUntil);
        try {
          const reason = this.audio.expired(timer.zoneId, now);
          if (reason === undefined) this.log('info', { zoneId: timer.zoneId }, 'sleep timer due: zone powered off');
          else
            this.log(
              'warn',
              { zoneId: timer.zoneId, reason },
              'sleep timer due on a zone that cannot answer: timer cleared, the zone was not switched off',
            );
        } catch (err) {
          this.log('warn', { zoneId: timer.zoneId, err }, 'sleep timer could not power the zone off');
        }
      }
    } finally {
      this.firing = false;
    }
    this.reschedule();
  }

  private cancel(): void {
    if (this.handle !== undefined) this.clock.clearTimeout(this.handle);
    this.handle = undefined;
  }
}
