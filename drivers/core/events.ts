// What every hardware driver reports the same way: listeners, status changes, settled() waiters and a safe logger.
import type { DriverEvent, DriverListener, DriverOptions } from '../driver.js';

export type DriverLog = NonNullable<DriverOptions['log']>;

export class DriverEvents {
  private readonly listeners = new Set<DriverListener>();
  private lastStatus: boolean | undefined;
  private settleWaiters: Array<() => void> = [];

  /** `family` prefixes the driver's own complaints (a listener that threw). */
  constructor(
    private readonly family: string,
    private readonly logFn: DriverOptions['log'],
  ) {}

  subscribe(listener: DriverListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hands an event to every listener; one that throws is logged and does not stop the others. */
  emit(event: DriverEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.log('error', `${this.family}: event listener threw: ${(err as Error).message}`);
      }
    }
  }

  /** Reports the link going up or down, once per change. */
  status(online: boolean, detail?: string): void {
    if (this.lastStatus === online) return;
    this.lastStatus = online;
    this.emit(detail === undefined ? { type: 'status', online } : { type: 'status', online, detail });
  }

  /** A promise for settled(): at once when `settledNow`, else at the first release() that finds the driver settled. */
  settled(settledNow: boolean): Promise<void> {
    if (settledNow) return Promise.resolve();
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  /** Resolves the waiting settled() promises if the driver is settled now. */
  release(isSettled: () => boolean): void {
    if (this.settleWaiters.length === 0 || !isSettled()) return;
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  log(level: Parameters<DriverLog>[0], msg: string, fields?: Record<string, unknown>): void {
    try {
      this.logFn?.(level, msg, fields);
    } catch {
      // A broken logger must not take the serial line down with it.
    }
  }
}
