// The MQTT bridge: one broker connection, retained discovery and state, commands into the domain; never fatal.
import mqtt, { type MqttClient } from 'mqtt';
import type { BridgeStatus } from '../domain/settings/index.js';
import type { AccountState, BusEvent, Caller, Clock, EventBus } from '../domain/shared/index.js';
import type { Logger } from '../log.js';
import {
  type BridgeAudio,
  type BridgePlayback,
  type BridgeReceivers,
  type BridgeScenes,
  type BridgeSleep,
  CommandHandler,
} from './commands.js';
import { type ResolvedBridgeOptions, tlsFiles } from './options.js';
import { OFFLINE, ONLINE } from './payloads.js';
import { type RetainedMemory, StatePublisher } from './publisher.js';
import { Topics } from './topics.js';
import {
  type BridgeAmplifier,
  type BridgeView,
  bridgedPlayers,
  bridgedScenes,
  EMPTY_VIEW,
  nextSleepTick,
  onConfigured,
} from './view.js';

export interface BridgeDeps {
  options: ResolvedBridgeOptions;
  audio: BridgeAudio;
  scenes: BridgeScenes;
  sleep: BridgeSleep;
  playback: BridgePlayback;
  receivers: BridgeReceivers;
  bus: EventBus;
  /** The bridge account as a caller, from current state; null when it is missing or disabled. */
  caller(): Caller | null;
  /** Which of the two it is, for health and the log. */
  accountState(): AccountState;
  amplifiers(): BridgeAmplifier[];
  /** The retained topics earlier bridges left on this broker. */
  memory: RetainedMemory;
  /** Time for the sleep timers' minutes left (the timers' own clock). */
  clock: Clock;
  log: Logger;
}

/** How long stop() waits for the broker to take the last messages before the socket is dropped. */
const STOP_GRACE_MS = 2000;

/**
 * Events after which what the account sees may differ (a playing stream player's position among them, at most once a
 * second): playlists and input devices are not bridged.
 */
const RELEVANT = /^(zone|player|scene|hardware|user|access)\./;

/** Where the README tells how to name the account: both ways of setting it. */
const ACCOUNT_FIX = 'set --mqtt-account (AZC_MQTT_ACCOUNT) or the account in the dashboard (Settings, Home Assistant)';

export class MqttBridge {
  private readonly topics: Topics;
  private readonly publisher: StatePublisher;
  private readonly commands: CommandHandler;
  private readonly log: Logger;
  private client: MqttClient | undefined;
  private unsubscribe: (() => void) | undefined;
  private syncing: NodeJS.Immediate | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** The next republish of sleep timers' minutes left (on the deps' clock). */
  private tick: unknown;
  private backoffMs: number;
  private current: BridgeStatus = { state: 'connecting' };
  private lastError = '';
  /** Why the account cannot act (missing or disabled), while it cannot; the bridge stays connected meanwhile. */
  private accountIssue: string | undefined;

  constructor(private readonly deps: BridgeDeps) {
    const { options } = deps;
    this.log = deps.log.child({ component: 'mqtt' });
    this.topics = new Topics(options.baseTopic, options.discoveryPrefix);
    this.publisher = new StatePublisher(
      this.topics,
      options,
      (topic, payload, qos, done) => this.send(topic, payload, qos, done),
      deps.memory,
    );
    this.commands = new CommandHandler(
      this.topics,
      {
        audio: deps.audio,
        scenes: deps.scenes,
        sleep: deps.sleep,
        playback: deps.playback,
        receivers: deps.receivers,
        caller: () => deps.caller(),
      },
      this.log,
    );
    this.backoffMs = options.reconnectMinMs;
  }

  /** A misconfigured account outranks the connection state: it is what someone has to fix. */
  get status(): BridgeStatus {
    if (this.accountIssue && this.current.state !== 'stopped' && this.current.state !== 'misconfigured') {
      return { state: 'misconfigured', detail: this.accountIssue };
    }
    return this.current;
  }

  /** Starts connecting and returns at once: the daemon never waits for the broker. */
  start(): void {
    const { options } = this.deps;
    if (!options.account)
      return this.refuse(
        `no bridge account: ${ACCOUNT_FIX} to an Operator user assigned the zones and players to bridge`,
      );
    if (options.client.password !== undefined && !options.client.username) {
      // MQTT carries a password only with a username; a broker would refuse the connection with no clue why.
      return this.refuse(
        'a broker password is set but no broker username: set --mqtt-username (AZC_MQTT_USERNAME) or the broker login in the dashboard',
      );
    }
    let tls: ReturnType<typeof tlsFiles>;
    try {
      tls = tlsFiles(options.tls);
    } catch (err) {
      return this.refuse(
        `cannot read a TLS file (fix --mqtt-ca/--mqtt-cert/--mqtt-key): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    this.unsubscribe = this.deps.bus.subscribe(
      'mqtt-bridge',
      (event: BusEvent) => {
        if (RELEVANT.test(event.type)) this.scheduleSync();
      },
      { internal: true },
    );
    this.log.info(
      { broker: withoutUserInfo(options.url), baseTopic: options.baseTopic, account: options.account },
      'MQTT bridge connecting',
    );
    this.checkAccount();
    // Reconnecting is ours (reconnectPeriod 0) so the back-off can grow and be capped.
    let client: MqttClient;
    try {
      client = mqtt.connect(options.url, { ...options.client, ...tls, reconnectPeriod: 0 });
    } catch (err) {
      this.unsubscribe();
      return this.refuse(`check the broker URL: ${(err as Error).message}`);
    }
    this.client = client;
    client.on('connect', () => this.onConnect());
    client.on('close', () => this.onClose());
    client.on('error', (err) => this.onError(err));
    client.on('message', (topic, payload, packet) => this.onMessage(topic, payload, packet.retain));
  }

  /**
   * After the configuration was replaced wholesale (a restore) without the usual events: publish the difference
   * between the broker's retained topics and the new view (renamed zones, new limits, users gone).
   */
  resync(): void {
    if (this.current.state === 'misconfigured' || this.current.state === 'stopped') return;
    this.scheduleSync();
  }

  async stop(): Promise<void> {
    if (this.current.state === 'misconfigured') return;
    this.current = { state: 'stopped' };
    this.unsubscribe?.();
    this.commands.stop();
    if (this.syncing) clearImmediate(this.syncing);
    if (this.retry) clearTimeout(this.retry);
    this.cancelTick();
    const client = this.client;
    if (!client) return;
    if (client.connected) client.publish(this.topics.availability, OFFLINE, { qos: 1, retain: true });
    await Promise.race([
      client.endAsync().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref()),
    ]);
    client.end(true);
    // Clears the broker acknowledged while it closed are remembered as done.
    this.publisher.flush();
  }

  /** Not started: health says why, and so does one log line. */
  private refuse(detail: string): void {
    this.current = { state: 'misconfigured', detail };
    this.log.error({ broker: withoutUserInfo(this.deps.options.url), reason: detail }, 'MQTT bridge not started');
  }

  private onConnect(): void {
    const client = this.client!;
    this.current = { state: 'connected' };
    // State messages are small and come in bursts; without this, Nagle's algorithm may hold one back until the
    // broker acknowledges the previous segment (a delayed ACK: up to ~40 ms).
    (client.stream as { setNoDelay?: (noDelay: boolean) => void }).setNoDelay?.(true);
    this.backoffMs = this.deps.options.reconnectMinMs;
    this.lastError = '';
    this.log.info('MQTT bridge connected');
    client.publish(this.topics.availability, ONLINE, { qos: 1, retain: true });
    client.subscribe([...this.topics.commandFilters, this.topics.hassStatus], { qos: 0 }, (err) => {
      if (err && this.current.state === 'connected')
        this.log.warn(
          { reason: err.message },
          'MQTT subscribe failed; commands will not arrive until the next reconnect',
        );
    });
    this.publisher.resend();
    this.scheduleSync();
  }

  private onClose(): void {
    if (this.current.state === 'stopped') return;
    if (this.current.state === 'connected') this.log.warn('MQTT broker connection lost; reconnecting');
    this.current = { state: 'reconnecting', ...(this.lastError ? { detail: this.lastError } : {}) };
    if (this.retry) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.deps.options.reconnectMaxMs);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.current.state !== 'stopped') this.client?.reconnect();
    }, delay);
    this.retry.unref();
  }

  private onError(err: Error): void {
    // Logged once per distinct reason, so a broker that is down for hours does not fill the journal.
    const reason = err.message || String(err);
    if (reason === this.lastError) return;
    this.lastError = reason;
    this.current = { ...this.current, detail: reason };
    this.log.warn({ reason }, 'MQTT broker error');
  }

  private onMessage(topic: string, payload: Buffer, retained: boolean): void {
    if (topic === this.topics.hassStatus) {
      // Home Assistant's birth message: it may have restarted and lost what it knew.
      if (payload.toString() === ONLINE) {
        this.publisher.resend();
        this.scheduleSync();
      }
      return;
    }
    // A retained command was sent at some earlier time, for all we know while the bridge was away: acting on it
    // now would replay a stale change on every reconnect.
    if (retained) this.commands.ignore(topic, 'a retained command is stale; publish commands without the retain flag');
    else this.commands.handle(topic, payload);
  }

  private scheduleSync(): void {
    // Coalesced: one API call that changes six zones publishes once, after the last of its events.
    this.syncing ??= setImmediate(() => {
      this.syncing = undefined;
      this.sync();
    });
  }

  private sync(): void {
    const caller = this.checkAccount();
    if (!this.client?.connected) return;
    try {
      const view = this.view(caller);
      this.publisher.sync(view);
      this.scheduleTick(view);
    } catch (err) {
      this.log.error({ err }, 'MQTT state publish failed');
    }
  }

  /** The account as a caller now; notes (and logs once per change) when it cannot act. */
  private checkAccount(): Caller | null {
    const caller = this.deps.caller();
    const issue = caller ? undefined : this.accountIssueNow();
    if (issue !== this.accountIssue) {
      this.accountIssue = issue;
      if (issue)
        this.log.warn(
          { account: this.deps.options.account, reason: issue },
          'MQTT bridge account cannot act: publishing no entities until it can',
        );
      else this.log.info({ account: this.deps.options.account }, 'MQTT bridge account can act again');
    }
    return caller;
  }

  private accountIssueNow(): string {
    const account = JSON.stringify(this.deps.options.account);
    return this.deps.accountState() === 'disabled'
      ? `the bridge account ${account} is disabled: enable it in the Users tab, or name another account (${ACCOUNT_FIX})`
      : `no azcd user is named ${account}: create it, or name an existing user (${ACCOUNT_FIX})`;
  }

  private view(caller: Caller | null): BridgeView {
    if (!caller) return EMPTY_VIEW;
    const amplifiers = this.deps.amplifiers();
    const zones = this.deps.audio.zones.list(caller).filter((zone) => onConfigured(amplifiers, zone.output));
    const players = bridgedPlayers(this.deps.audio.players.list(caller));
    const streams = players.filter((player) => player.output !== null);
    return {
      account: true,
      zones,
      players,
      playback: new Map(streams.map((player) => [player.id, this.deps.playback.get(caller, player.id)])),
      receivers: new Map(streams.map((player) => [player.id, this.deps.receivers.list(caller, player.id)])),
      scenes: bridgedScenes(this.deps.scenes.list(caller), zones),
      amplifiers,
      now: this.deps.clock.now(),
    };
  }

  /** A sleep timer's minutes left change as time passes, not through events: republish when the next one drops. */
  private scheduleTick(view: BridgeView): void {
    this.cancelTick();
    const wait = nextSleepTick(view);
    if (wait === undefined) return;
    this.tick = this.deps.clock.setTimeout(() => {
      this.tick = undefined;
      this.scheduleSync();
    }, wait);
  }

  private cancelTick(): void {
    if (this.tick !== undefined) this.deps.clock.clearTimeout(this.tick);
    this.tick = undefined;
  }

  private send(topic: string, payload: string, qos: 0 | 1, done?: (delivered: boolean) => void): void {
    this.client?.publish(topic, payload, { qos, retain: true }, (err) => {
      if (err) this.log.debug({ topic, reason: err.message }, 'MQTT publish not delivered');
      done?.(!err);
    });
  }
}

/** The broker URL without any user:password part, for logs. */
export function withoutUserInfo(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}
