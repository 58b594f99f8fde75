// The MQTT bridge: one broker connection, retained discovery and state, commands into the domain; never fatal.
import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../log.js';
import type { Caller } from '../domain/access.js';
import type { BusEvent, EventBus } from '../domain/events.js';
import { CommandHandler, type BridgeAudio } from './commands.js';
import { tlsFiles, type ResolvedBridgeOptions } from './options.js';
import { OFFLINE, ONLINE } from './payloads.js';
import { StatePublisher } from './publisher.js';
import { Topics } from './topics.js';
import { EMPTY_VIEW, bridgedPlayers, onConfigured, type BridgeAmplifier, type BridgeView } from './view.js';

/**
 * refused: not started (no bridge account configured); connecting: first attempt; connected; reconnecting: the
 * broker went away and the bridge is retrying with back-off; stopped: the daemon is shutting down.
 */
export type BridgeState = 'refused' | 'connecting' | 'connected' | 'reconnecting' | 'stopped';

export interface BridgeStatus {
  state: BridgeState;
  /** Why the bridge is not connected, when it knows (never a secret). */
  detail?: string;
}

export interface BridgeDeps {
  options: ResolvedBridgeOptions;
  audio: BridgeAudio;
  bus: EventBus;
  /** The bridge account as a caller, from current state; null when it is missing or disabled. */
  caller(): Caller | null;
  amplifiers(): BridgeAmplifier[];
  log: Logger;
}

/** How long stop() waits for the broker to take the last messages before the socket is dropped. */
const STOP_GRACE_MS = 2000;

/** Events after which what the account sees may differ: playlists and input devices are not bridged. */
const RELEVANT = /^(zone|player|hardware|user|access)\./;

export class MqttBridge {
  private readonly topics: Topics;
  private readonly publisher: StatePublisher;
  private readonly commands: CommandHandler;
  private readonly log: Logger;
  private client: MqttClient | undefined;
  private unsubscribe: (() => void) | undefined;
  private syncing: NodeJS.Immediate | undefined;
  private retry: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private current: BridgeStatus = { state: 'connecting' };
  private lastError = '';
  private accountSeen: boolean | undefined;
  /** The client whose retained topics are being read (see sweep); undefined once they are in. */
  private sweeping: MqttClient | undefined;

  constructor(private readonly deps: BridgeDeps) {
    const { options } = deps;
    this.log = deps.log.child({ component: 'mqtt' });
    this.topics = new Topics(options.baseTopic, options.discoveryPrefix);
    this.publisher = new StatePublisher(this.topics, options, (topic, payload, qos) => this.send(topic, payload, qos));
    this.commands = new CommandHandler(this.topics, { audio: deps.audio, caller: () => deps.caller() }, this.log);
    this.backoffMs = options.reconnectMinMs;
  }

  get status(): BridgeStatus {
    return this.current;
  }

  /** Starts connecting and returns at once: the daemon never waits for the broker. */
  start(): void {
    const { options } = this.deps;
    if (!options.account) {
      this.current = { state: 'refused', detail: 'no bridge account: set --mqtt-account (or AZC_MQTT_ACCOUNT) to an Operator user' };
      this.log.error(
        { broker: redactUrl(options.url) },
        'MQTT bridge not started: name the azcd user it acts as with --mqtt-account (an Operator assigned the zones and players to bridge)',
      );
      return;
    }
    let tls;
    try {
      tls = tlsFiles(options.tls);
    } catch (err) {
      const reason = `cannot read a TLS file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
      this.current = { state: 'refused', detail: reason };
      this.log.error({ reason }, 'MQTT bridge not started: fix --mqtt-ca/--mqtt-cert/--mqtt-key');
      return;
    }
    this.unsubscribe = this.deps.bus.subscribe((event: BusEvent) => {
      if (RELEVANT.test(event.type)) this.scheduleSync();
    }, { internal: true });
    this.log.info({ broker: redactUrl(options.url), baseTopic: options.baseTopic, account: options.account }, 'MQTT bridge connecting');
    // Reconnecting is ours (reconnectPeriod 0) so the back-off can grow and be capped.
    let client: MqttClient;
    try {
      client = mqtt.connect(options.url, { ...options.client, ...tls, reconnectPeriod: 0 });
    } catch (err) {
      this.unsubscribe();
      this.current = { state: 'refused', detail: (err as Error).message };
      this.log.error({ reason: (err as Error).message }, 'MQTT bridge not started: check --mqtt-url');
      return;
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
    if (this.current.state === 'refused' || this.current.state === 'stopped') return;
    this.scheduleSync();
  }

  async stop(): Promise<void> {
    if (this.current.state === 'refused') return;
    this.current = { state: 'stopped' };
    this.unsubscribe?.();
    this.commands.stop();
    if (this.syncing) clearImmediate(this.syncing);
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    if (!client) return;
    if (client.connected) client.publish(this.topics.availability, OFFLINE, { qos: 1, retain: true });
    await Promise.race([
      client.endAsync().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref()),
    ]);
    client.end(true);
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
      if (err && this.current.state === 'connected') this.log.warn({ reason: err.message }, 'MQTT subscribe failed; commands will not arrive until the next reconnect');
    });
    this.publisher.resend();
    this.scheduleSync();
    this.sweep(client);
  }

  /**
   * Learns what the broker retains for this bridge from an earlier run, so entities of zones and players that went
   * away while the daemon was down (deleted, or of an amplifier taken out of the configuration) are cleared instead
   * of staying in Home Assistant. The broker sends the retained messages of a subscription before it answers a later
   * unsubscribe, so once that answer is in, all of them are: then the next sync clears what the view lacks.
   */
  private sweep(client: MqttClient): void {
    const filters = this.topics.retainedFilters(this.deps.options.nodeId);
    this.sweeping = client;
    client.subscribe(filters, { qos: 0 }, (err) => {
      if (err) {
        this.sweeping = undefined;
        return;
      }
      client.unsubscribe(filters, () => {
        if (this.sweeping !== client) return;
        this.sweeping = undefined;
        this.scheduleSync();
      });
    });
  }

  private onClose(): void {
    this.sweeping = undefined;
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
    if (this.topics.isRetained(topic, this.deps.options.nodeId)) {
      // Only retained ones tell what the broker holds; others are our own publishes coming back while sweeping.
      if (this.sweeping && retained) this.publisher.learn(topic, payload.toString('utf8'));
      return;
    }
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
    if (!this.client?.connected) return;
    try {
      this.publisher.sync(this.view());
    } catch (err) {
      this.log.error({ err }, 'MQTT state publish failed');
    }
  }

  private view(): BridgeView {
    const caller = this.deps.caller();
    if (Boolean(caller) !== this.accountSeen) {
      this.accountSeen = Boolean(caller);
      if (!caller) this.log.warn({ account: this.deps.options.account }, 'MQTT bridge account is missing or disabled: publishing no entities until it exists');
    }
    if (!caller) return EMPTY_VIEW;
    const amplifiers = this.deps.amplifiers();
    return {
      account: true,
      zones: this.deps.audio.listZones(caller).filter((zone) => onConfigured(amplifiers, zone.output)),
      players: bridgedPlayers(this.deps.audio.listPlayers(caller)),
      amplifiers,
    };
  }

  private send(topic: string, payload: string, qos: 0 | 1): void {
    this.client?.publish(topic, payload, { qos, retain: true }, (err) => {
      if (err) this.log.debug({ topic, reason: err.message }, 'MQTT publish not delivered');
    });
  }
}

/** The broker URL without any user:password part, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}
