// systemd notification for azcd: wraps the C sd_notify addon; a no-op outside systemd, one log line if the addon is missing.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * Where the addon can be: `native/build/Release` next to this module (`native/index.ts` run from source) or under
 * any folder above it, so the compiled module (`dist/native/`) and the daemon's bundle (`dist/daemon/main.js`, or
 * one of its chunks) find it too.
 */
function defaultAddonPaths(): string[] {
  const paths = ['./build/Release/azc_notify.node'];
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    dir = path.dirname(dir);
    paths.push(path.join(dir, 'native', 'build', 'Release', 'azc_notify.node'));
  }
  return paths;
}

/** Longest STATUS= text we send; systemd shows one short line, and the addon refuses more than 4096 bytes. */
const MAX_STATUS_CHARS = 1024;

interface Addon {
  notify(message: string): boolean;
  fixMallocThresholds(): boolean;
}

export interface Notifier {
  /** True when the addon is loaded and NOTIFY_SOCKET was set when the notifier was created. */
  readonly available: boolean;
  /** READY=1 (plus STATUS= when given): systemd considers a Type=notify service started. */
  ready(status?: string): boolean;
  status(text: string): boolean;
  watchdogPing(): boolean;
  /** STOPPING=1: shutdown has begun, so systemd stops expecting watchdog pings. */
  stopping(): boolean;
}

export interface NotifierOptions {
  /** Addon files to try, resolved against this module (tests point this at a missing file). */
  addonPaths?: readonly string[];
}

type Log = (msg: string) => void;

const defaultLog: Log = (msg) => console.warn(msg);

function loadAddon(paths: readonly string[]): { addon?: Addon; error?: string } {
  const errors: string[] = [];
  for (const path of paths) {
    try {
      const loaded = require(path) as Partial<Addon>;
      if (typeof loaded.notify === 'function') return { addon: loaded as Addon };
      errors.push(`${path}: no notify() export`);
    } catch (err) {
      errors.push(`${path}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return { error: errors.join('; ') };
}

/**
 * Keeps glibc's malloc at its starting mmap and trim thresholds (128 KiB), which it otherwise raises for good once a
 * large block it mapped is freed: after the first password hash (scrypt's 16 MiB) up to 32 MiB of freed heap would
 * stay with the process (ARCHITECTURE.md, "Memory"). Call it before the first large allocation. Returns whether it
 * was applied: false without the addon or on another C library.
 */
export function fixMallocThresholds(options: NotifierOptions = {}): boolean {
  const { addon } = loadAddon(options.addonPaths ?? defaultAddonPaths());
  return typeof addon?.fixMallocThresholds === 'function' && addon.fixMallocThresholds();
}

/** Single-line status text, so a caller's newline cannot inject another systemd assignment. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, MAX_STATUS_CHARS);
}

/** Creates the notifier; reads NOTIFY_SOCKET now, and the addon re-reads it for every message. */
export function createNotifier(log: Log = defaultLog, options: NotifierOptions = {}): Notifier {
  const underSystemd = Boolean(process.env['NOTIFY_SOCKET']);
  const { addon, error } = loadAddon(options.addonPaths ?? defaultAddonPaths());
  if (!addon) {
    log(
      underSystemd
        ? `azcd: sd_notify addon missing (${error}); systemd will not see READY=1 and will time the start out. ` +
            'Rebuild it with `npm rebuild` (needs python3, make and a C compiler).'
        : `azcd: sd_notify addon not built (${error}); running without systemd notification.`,
    );
  }
  const available = underSystemd && addon !== undefined;
  const loggedFailures = new Set<string>();

  const send = (message: string): boolean => {
    if (!available || !addon) return false;
    try {
      return addon.notify(message);
    } catch (err) {
      // A broken notify socket must never take the daemon down; say so once per kind of failure.
      const code = (err as NodeJS.ErrnoException).code ?? 'ERR_SD_NOTIFY';
      if (!loggedFailures.has(code)) {
        loggedFailures.add(code);
        log(`azcd: ${(err as Error).message} (further ${code} failures are not logged)`);
      }
      return false;
    }
  };

  return {
    available,
    ready: (status) => send(status === undefined ? 'READY=1' : `READY=1\nSTATUS=${oneLine(status)}`),
    status: (text) => send(`STATUS=${oneLine(text)}`),
    watchdogPing: () => send('WATCHDOG=1'),
    stopping: () => send('STOPPING=1'),
  };
}

/**
 * The watchdog ping interval in ms (half of WATCHDOG_USEC, as sd_watchdog_enabled(3) advises), or undefined when
 * systemd asked for no watchdog or asked another process (WATCHDOG_PID) to send it.
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const usecText = env['WATCHDOG_USEC'];
  if (usecText === undefined || !/^[0-9]+$/.test(usecText)) return undefined;
  const usec = Number(usecText);
  if (!Number.isSafeInteger(usec) || usec <= 0) return undefined;
  const pidText = env['WATCHDOG_PID'];
  if (pidText !== undefined && pidText !== '' && Number(pidText) !== process.pid) return undefined;
  return Math.max(1, Math.floor(usec / 2000));
}

/**
 * Sends WATCHDOG=1 every half watchdog interval while `isHealthy()` returns true (a throw counts as unhealthy), so a
 * wedged event loop or store makes systemd restart the service. Returns a stop function; the timer never keeps the
 * process alive on its own.
 */
export function startWatchdog(notifier: Notifier, isHealthy: () => boolean, log: Log = defaultLog): () => void {
  const intervalMs = watchdogIntervalMs();
  if (intervalMs === undefined || !notifier.available) return () => {};
  let wasHealthy = true;
  const timer = setInterval(() => {
    let healthy: boolean;
    try {
      healthy = isHealthy();
    } catch {
      healthy = false;
    }
    if (healthy) notifier.watchdogPing();
    if (healthy !== wasHealthy) {
      log(healthy ? 'azcd: health check passes again; watchdog pings resumed'
        : 'azcd: health check failed; withholding systemd watchdog pings');
    }
    wasHealthy = healthy;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
