// systemd integration of a listening daemon: READY=1 with a status line, STATUS on amplifier changes, watchdog
// pings while the event loop and the store are healthy, and STOPPING=1 when shutdown begins.

import { type Notifier, startWatchdog, watchdogIntervalMs } from '../native/index.js';
import type { EventBus } from './domain/shared/index.js';
import { monotonicMs } from './runtime.js';

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
  // The loop's lag is how late the watchdog's own tick runs: no sampling timer of its own (an idle daemon that
  // woke every 50 ms to sample the loop never slept).
  const intervalMs = watchdogIntervalMs() ?? 0;
  let lastTick = monotonicMs();
  const stopWatchdog = startWatchdog(
    notifier,
    () => {
      const now = monotonicMs();
      const lagMs = now - lastTick - intervalMs;
      lastTick = now;
      return lagMs < WATCHDOG_MAX_LAG_MS && storeHealthy();
    },
    log,
  );
  notifier.ready(summary());
  const unsubscribe = bus.subscribe('systemd-status', (event) => {
    if (event.type === 'hardware.status') notifier.status(summary());
  });
  return () => {
    notifier.stopping();
    stopWatchdog();
    unsubscribe();
  };
}
