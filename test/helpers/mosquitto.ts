// Runs Debian's mosquitto on a free loopback port with a temporary config, and a client that records what it sees.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { freePort } from './sockets.js';
import { Changes, WAIT_MS, waitFor } from './wait-for.js';

export const MOSQUITTO = '/usr/sbin/mosquitto';

export interface Broker {
  url: string;
  port: number;
  /** Kills the broker (SIGKILL: a crash, as clients see it) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and config (no persistence: retained messages are gone). */
  start(): Promise<void>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Starts mosquitto; with `auth`, anonymous clients are refused and only that user/password may connect. */
export async function startBroker(
  t: Teardown,
  options: { auth?: { username: string; password: string } } = {},
): Promise<Broker> {
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-mosquitto-'));
  let port = await freePort();
  const lines = [
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
  ];
  if (options.auth) {
    const passwords = path.join(dir, 'passwd');
    writeFileSync(passwords, '');
    execFileSync('/usr/bin/mosquitto_passwd', ['-b', passwords, options.auth.username, options.auth.password]);
    // mosquitto started as root reads its files as the `mosquitto` user it switches to.
    chmodSync(dir, 0o755);
    chmodSync(passwords, 0o644);
    lines.push('allow_anonymous false', `password_file ${passwords}`);
  } else {
    lines.push('allow_anonymous true');
  }
  const conf = path.join(dir, 'mosquitto.conf');
  const writeConf = () => writeFileSync(conf, `${[`listener ${port} 127.0.0.1`, ...lines].join('\n')}\n`);
  writeConf();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const proc = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
      child = proc;
      let err = '';
      exited = new Promise((done) => proc.once('exit', () => done()));
      proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        err += chunk;
        if (/running/.test(err)) resolve();
      });
      proc.once('exit', (code) =>
        reject(new Error(`mosquitto exited (${code}) before it was running: ${err.slice(-400)}`)),
      );
    });
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      // Not SIGTERM: a mosquitto that gets it just before its loop sleeps may not act on it for a long while.
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
  };
  // A free port may be taken by another test file before mosquitto binds it: the first start takes another one then.
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      if (attempt === 5 || !/Address already in use/.test((err as Error).message)) throw err;
      port = await freePort();
      writeConf();
    }
  }
  t.teardown(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { url: `mqtt://127.0.0.1:${port}`, port, stop, start };
}

/** A hub-like client: subscribes to everything, keeps the latest payload per topic and wakes waiters. */
export class Watcher {
  readonly latest = new Map<string, string>();
  readonly received: Array<{ topic: string; payload: string; retain: boolean }> = [];
  private readonly changes = new Changes();

  private constructor(readonly client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      const text = payload.toString('utf8');
      this.received.push({ topic, payload: text, retain: packet.retain });
      if (text === '') this.latest.delete(topic);
      else this.latest.set(topic, text);
      this.changes.notify();
    });
  }

  static async connect(
    t: Teardown,
    url: string,
    filters: string[] = ['#'],
    options: mqtt.IClientOptions = {},
  ): Promise<Watcher> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 200, ...options });
    t.teardown(() => client.endAsync(true));
    const watcher = new Watcher(client);
    await client.subscribeAsync(filters, { qos: 1 });
    return watcher;
  }

  /**
   * Resolves once `check` holds for what was received (checked now and after every message); rejects after
   * `timeoutMs`, naming `what` and the last payloads seen, so a missing message fails the test instead of hanging it.
   */
  until(
    check: (w: Watcher) => boolean,
    what = 'a condition on the received messages',
    timeoutMs = WAIT_MS,
  ): Promise<void> {
    return waitFor(() => check(this), timeoutMs, { what, changes: this.changes }).then(
      () => undefined,
      (err: Error) => {
        throw new Error(`${err.message}; last received: ${JSON.stringify(this.received.slice(-5))}`);
      },
    );
  }

  /** Resolves with the topic's payload once it equals `payload` (or satisfies it, for a function). */
  async value(topic: string, payload: string | ((p: string) => boolean)): Promise<string> {
    const ok = (p: string | undefined) => p !== undefined && (typeof payload === 'string' ? p === payload : payload(p));
    const wanted = typeof payload === 'string' ? JSON.stringify(payload) : 'a matching payload';
    await this.until((w) => ok(w.latest.get(topic)), `${topic} to hold ${wanted}`);
    return this.latest.get(topic)!;
  }

  /** Resolves once the topic holds nothing (an empty retained message was seen or it was never set). */
  async gone(topic: string): Promise<void> {
    await this.until((w) => !w.latest.has(topic), `${topic} to be cleared`);
  }

  json(topic: string): Record<string, unknown> {
    return JSON.parse(this.latest.get(topic)!) as Record<string, unknown>;
  }

  publish(topic: string, payload: string, options: { retain?: boolean; qos?: 0 | 1 } = {}): Promise<unknown> {
    return this.client.publishAsync(topic, payload, options);
  }
}
