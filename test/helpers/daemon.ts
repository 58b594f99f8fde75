// Starts a real daemon in this process on a loopback port with a temporary state directory.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Daemon, type DaemonOptions } from '../../daemon/app.js';
import { type Config, defaultConfig } from '../../daemon/config.js';
import { createLogger } from '../../daemon/log.js';
import type { AmplifierDriver } from '../../drivers/driver.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { TEST_PASSWORDS } from './passwords.js';
import { Changes, waitFor } from './wait-for.js';
import './sqlite-guard.js';

export interface TestDaemon {
  daemon: Daemon;
  base: string;
  stateDir: string;
  adminKey: string;
  adminPassword: string;
  driver: AmplifierDriver;
  /** Log lines the daemon wrote (JSON strings). */
  logs: string[];
  /**
   * Resolves with the log lines matching `pattern` once there are `count` of them (the logger writes as it goes, so
   * this follows it rather than guessing a delay); rejects after the suite's time limit, naming the pattern.
   */
  untilLog(pattern: RegExp, count?: number): Promise<string[]>;
  /** Stops the daemon; the state directory is kept so a test can restart on it. */
  stop(): Promise<void>;
}

export interface StartOptions {
  stateDir?: string;
  config?: Partial<Config>;
  driver?: AmplifierDriver;
  /** Build the amplifiers from the configuration (`config.amplifiers`, or driver and serialPort) instead of a simulated driver. */
  configuredAmplifiers?: boolean;
  /** Given to the drivers built from the configuration (see DaemonOptions). */
  driverOptions?: DaemonOptions['driverOptions'];
  adminPassword?: string;
  /** A stand-in for systemd's notify socket (none by default). */
  notifier?: DaemonOptions['notifier'];
  /** SSDP socket settings that keep an SSDP test on loopback (see DaemonOptions). */
  ssdp?: DaemonOptions['ssdp'];
  /** A hand-driven clock for the sleep timers (see DaemonOptions). */
  clock?: DaemonOptions['clock'];
  /** Hash passwords at the daemon's own scrypt cost (N=16384) instead of the suite's cheaper TEST_PASSWORDS. */
  productionPasswords?: boolean;
  /** The host name and addresses the daemon reads as its machine's (see DaemonOptions); the test machine's by default. */
  machine?: DaemonOptions['machine'];
  /** Runs the receivers the players' switches ask for (see DaemonOptions). */
  receiverRuntime?: DaemonOptions['receiverRuntime'];
  /** Runs the casting runtime's receivers in a network namespace (see DaemonOptions). */
  castingOptions?: DaemonOptions['castingOptions'];
}

/** Folders made by `tempDir` in this process, removed when it exits (a test's teardown may still be using one). */
const madeDirs: string[] = [];

/** A new private folder under the system's temporary folder, removed with everything in it when the process exits. */
export function tempDir(prefix = 'azc-test-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  if (madeDirs.length === 0) process.once('exit', removeMadeDirs);
  madeDirs.push(dir);
  return dir;
}

function removeMadeDirs(): void {
  for (const dir of madeDirs.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      // A folder left behind is litter, not a failure of what the file tested: say so and go on.
      process.stderr.write(`# could not remove ${dir}: ${(err as Error).message}\n`);
    }
  }
}

export async function startDaemon(options: StartOptions = {}): Promise<TestDaemon> {
  const stateDir = options.stateDir ?? tempDir();
  const config: Config = {
    ...defaultConfig(),
    host: '127.0.0.1',
    port: 0,
    stateDir,
    exportDir: path.join(stateDir, 'exports'),
    playback: { ...defaultConfig().playback, musicDir: path.join(stateDir, 'music') },
    logLevel: 'info',
    ...options.config,
  };
  const logs: string[] = [];
  const logged = new Changes();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      logged.notify();
      done();
    },
  });
  const untilLog = (pattern: RegExp, count = 1) =>
    waitFor(
      () => {
        const lines = logs.filter((line) => pattern.test(line));
        return lines.length >= count ? lines : undefined;
      },
      undefined,
      { what: `${count} log line(s) matching ${pattern}`, changes: logged },
    );
  const logger = createLogger(config.logLevel, sink);
  const injected = options.configuredAmplifiers
    ? undefined
    : (options.driver ?? new SimulatedDriver({ applyDelayMs: 1 }));
  const daemon = new Daemon({
    config,
    logger,
    driver: injected,
    driverOptions: options.driverOptions,
    notifier: options.notifier,
    ssdp: options.ssdp,
    clock: options.clock,
    passwordHasher: options.productionPasswords ? undefined : TEST_PASSWORDS,
    machine: options.machine,
    receiverRuntime: options.receiverRuntime,
    castingOptions: options.castingOptions,
  });
  const adminPassword = options.adminPassword ?? 'admin-password-1';
  const { port } = await daemon.start(adminPassword);
  const file = path.join(stateDir, 'initial-admin.txt');
  const adminKey = /apiKey=(\S+)/.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  return {
    daemon,
    base: `http://127.0.0.1:${port}`,
    stateDir,
    adminKey,
    adminPassword,
    driver: injected ?? daemon.services.amplifiers.list[0]!.driver,
    logs,
    untilLog,
    stop: () => daemon.stop(),
  };
}

/** Registers teardown: stop the daemon and remove its state directory. */
export async function startTestDaemon(
  t: { teardown(fn: () => unknown): void },
  options: StartOptions = {},
): Promise<TestDaemon> {
  const d = await startDaemon(options);
  t.teardown(async () => {
    await d.stop();
    if (!options.stateDir) rmSync(d.stateDir, { recursive: true, force: true });
  });
  return d;
}
