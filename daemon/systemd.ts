// systemd integration of a listening daemon: READY=1 with a status line, STATUS on amplifier changes, watchdog
// pings while the event loop and the store are healthy, and STOPPING=1 when shutdown begins.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startWatchdog, type Notifier } from '../native/index.js';
import type { EventBus } from './domain/events.js';

/** Event-loop delay above which the watchdog is starved on purpose, so systemd restarts a wedged daemon. */
export const WATCHDOG_MAX_LAG_MS = 5000;

export interface SystemdOptions {
  notifier: Notifier;
  bus: EventBus;
  /** One line for `systemctl status`. */
  summary(): string;
  storeHealthy(): boolean;
  log(msg: string): void;
}

/** Sends READY=1 and starts the watchdog; the returned function sends STOPPING=1 and stops it. */
export function announceReady({ notifier, bus, summary, storeHealthy, log }: SystemdOptions): () => void {
  const lag = monitorEventLoopDelay({ resolution: 50 });
  lag.enable();
  const stopWatchdog = startWatchdog(
    notifier,
    () => {
      const healthy = lag.max / 1e6 < WATCHDOG_MAX_LAG_MS && storeHealthy();
      lag.reset();
      return healthy;
    },
    log,
  );
  notifier.ready(summary());
  const unsubscribe = bus.subscribe((event) => {
    if (event.type === 'hardware.status') notifier.status(summary());
  });
  return () => {
    notifier.stopping();
    stopWatchdog();
    unsubscribe();
    lag.disable();
  };
}
