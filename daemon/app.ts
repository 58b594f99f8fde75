// The composition root: wires store, services, driver, HTTP, event stream, MQTT, SSDP, mDNS and systemd, starts them in
// one order and stops them in the reverse one. The constructor only stores options; start() does the I/O.
import { VERSION, prepareStateDir } from './paths.js';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { amplifiersOf, type Config, type MqttConfig } from './config.js';
import type { Logger } from './log.js';
import { Store } from './store/db.js';
import { UsersRepo } from './store/users-repo.js';
import { AudioRepo } from './store/audio-repo.js';
import { MetaRepo } from './store/meta-repo.js';
import { PlaylistsRepo } from './store/playlists-repo.js';
import { BackupRepo } from './store/backup-repo.js';
import { BackupService } from './domain/backup.js';
import { backupRoutes } from './api/backup.js';
import { restoreBodyBytes } from './domain/backup-format.js';
import { DeviceSecrets, writePrivateFile } from './domain/secrets.js';
import { EventBus, DomainEventSchema, StreamResetSchema } from './domain/events.js';
import { Type as T } from '@sinclair/typebox';
import { Authentication, type PasswordHasher } from './domain/authentication.js';
import { UserAdmin } from './domain/user-admin.js';
import { AudioService } from './domain/audio.js';
import { PlaylistsService } from './domain/playlists.js';
import { InputsService } from './domain/inputs.js';
import { ScenesService } from './domain/scenes.js';
import { SleepTimers, systemClock, type Clock } from './domain/sleep-timers.js';
import { ScenesRepo } from './store/scenes-repo.js';
import { HttpServer } from './http/server.js';
import { ReadCache } from './http/read-cache.js';
import type { InjectRequest, InjectResponse } from './http/inject.js';
import { EventStreams } from './http/sse.js';
import { buildOpenApi } from './http/openapi.js';
import { userRoutes } from './api/users.js';
import { playerRoutes } from './api/players.js';
import { playlistRoutes } from './api/playlists.js';
import { inputRoutes } from './api/input-devices.js';
import { sceneRoutes } from './api/scenes.js';
import { systemRoutes } from './api/system.js';
import { ProblemSchema } from './api/schemas.js';
import { createDriver } from '../drivers/index.js';
import type { AmplifierDriver, DriverOptions } from '../drivers/driver.js';
import { Amplifiers, singleAmplifier, type Amplifier } from './domain/amplifiers.js';
import { renderDescription } from './discovery/description.js';
import type { SsdpAnnouncerOptions } from './discovery/ssdp.js';
import { createStaticHandler } from './http/static.js';
import type { Notifier } from '../native/index.js';
import { Lifecycle } from './lifecycle.js';
import { announceReady } from './systemd.js';
import { BridgeSupervisor } from './mqtt/supervisor.js';
import { dashboardUrl } from './mqtt/options.js';
import { BridgeSettings } from './domain/bridge-settings.js';
import { BridgeRepo } from './store/bridge-repo.js';
import { bridgeSettingsRoutes } from './api/settings.js';
import { mdnsHostname } from './discovery/mdns-hostname.js';

export { VERSION };

/** How long shutdown lets requests in flight finish before the connections close. */
const SHUTDOWN_DRAIN_MS = 5000;
/** How long shutdown waits for the amplifiers to apply the last changes before the drivers stop. */
const DRIVER_SETTLE_MS = 2000;

export interface InitialAdmin {
  username: string;
  password: string;
  apiKey: string;
  file: string;
}

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  /** A ready driver instead of those built from the configuration (tests inject the simulated one). */
  driver?: AmplifierDriver;
  /** Given to every driver built from the configuration (tests pass an in-memory openPort and a hand-driven clock). */
  driverOptions?: Pick<DriverOptions, 'openPort' | 'clock'>;
  /** systemd notification (READY, STATUS, WATCHDOG, STOPPING); none unless given. */
  notifier?: Notifier;
  /** SSDP socket settings a test changes to stay on loopback (a free port, bound to 127.0.0.1 only). */
  ssdp?: Pick<SsdpAnnouncerOptions, 'port' | 'bindToInterfaceAddress' | 'maxAgeS'>;
  /** Time for the sleep timers (tests pass a hand-driven clock); the system clock by default. */
  clock?: Clock;
  /** Password hashing; production scrypt cost by default (tests pass the same format at a lower cost). */
  passwordHasher?: PasswordHasher;
}

/** Everything that exists once the store is open; built by start(). */
interface Parts {
  store: Store;
  amplifiers: Amplifiers;
  bus: EventBus;
  udn: string;
  authentication: Authentication;
  userAdmin: UserAdmin;
  audio: AudioService;
  playlists: PlaylistsService;
  inputs: InputsService;
  scenes: ScenesService;
  sleepTimers: SleepTimers;
  streams: EventStreams;
  server: HttpServer;
}

export class Daemon {
  readonly config: Config;
  readonly logger: Logger;
  startedAt = Date.now();
  port = 0;
  private parts: Parts | undefined;
  /** The OpenAPI document, built on its first request (start never needs it). */
  private openApiJson: string | undefined;
  private readonly lifecycle: Lifecycle;
  private starting: Promise<unknown> | undefined;
  private stopping: Promise<void> | undefined;
  /** Runs the MQTT bridge with the settings that apply now (mqttSupervisor). */
  private mqtt: BridgeSupervisor | undefined;

  constructor(private readonly options: DaemonOptions) {
    this.config = options.config;
    this.logger = options.logger;
    this.lifecycle = new Lifecycle(options.logger);
  }

  get store(): Store {
    return this.started().store;
  }
  /** The first amplifier's driver (the only one unless the config file lists several). */
  get driver(): AmplifierDriver {
    return this.started().amplifiers.list[0]!.driver;
  }
  get amplifiers(): Amplifiers {
    return this.started().amplifiers;
  }
  get bus(): EventBus {
    return this.started().bus;
  }
  get udn(): string {
    return this.started().udn;
  }
  get authentication(): Authentication {
    return this.started().authentication;
  }
  get userAdmin(): UserAdmin {
    return this.started().userAdmin;
  }
  get audio(): AudioService {
    return this.started().audio;
  }
  get playlists(): PlaylistsService {
    return this.started().playlists;
  }
  get inputs(): InputsService {
    return this.started().inputs;
  }
  get scenes(): ScenesService {
    return this.started().scenes;
  }
  get sleepTimers(): SleepTimers {
    return this.started().sleepTimers;
  }
  get streams(): EventStreams {
    return this.started().streams;
  }
  get server(): HttpServer {
    return this.started().server;
  }

  /** Sends a request through the HTTP pipeline in-process, without a socket (tests): same routes, auth and errors. */
  inject(request: InjectRequest): Promise<InjectResponse> {
    return this.started().server.inject(request);
  }

  /**
   * Opens the store, starts the amplifier, creates the first admin on an empty database (its credentials file is
   * written before the account exists), listens, then announces over SSDP and tells systemd it is ready. A step
   * that fails stops the ones before it.
   */
  start(adminPassword?: string): Promise<{ port: number; initialAdmin: InitialAdmin | null }> {
    if (this.starting) return Promise.reject(new Error('the daemon was already started'));
    const starting = this.startOnce(adminPassword);
    this.starting = starting.catch(() => {});
    return starting;
  }

  private async startOnce(adminPassword: string | undefined): Promise<{ port: number; initialAdmin: InitialAdmin | null }> {
    const { config, logger, lifecycle } = this;
    this.startedAt = Date.now();
    try {
      const amplifiers = this.options.driver ? new Amplifiers([singleAmplifier(this.options.driver)]) : await this.createAmplifiers();
      // A folder that cannot hold the state stops the start here, with one line naming it and the fix.
      prepareStateDir(config.stateDir);
      const store: Store = await lifecycle.start('store', () => new Store(path.join(config.stateDir, 'azc.db')), () => store.close());
      const parts = (this.parts = this.compose(store, amplifiers, DeviceSecrets.open(config.stateDir)));
      await lifecycle.start('amplifier', () => parts.audio.start(), async () => {
        const settled = Promise.all(amplifiers.list.map((a) => a.driver.settled()));
        await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, DRIVER_SETTLE_MS).unref())]);
        await parts.audio.stop();
      });
      // Timers power zones off through the amplifiers, so they run only while those do.
      await lifecycle.start('sleep timers', () => parts.sleepTimers.start(), () => parts.sleepTimers.stop());
      // The uWS app exists since compose(); closing it ends every connection that is left.
      await lifecycle.start('http', () => {}, () => parts.server.close());
      await lifecycle.start('event stream', () => {}, () => parts.streams.dispose());
      const initialAdmin = await this.ensureInitialAdmin(adminPassword);
      this.port = await lifecycle.start('listener', () => parts.server.listen(config.host, config.port), async () => {
        parts.server.stopListening();
        await parts.server.drain(SHUTDOWN_DRAIN_MS);
      });
      logger.info(
        { host: config.host, port: this.port, driver: amplifiers.list[0]!.driver.name, amplifiers: amplifiers.list.map((a) => a.name), uws: parts.server.uwsSource },
        'listening',
      );
      await this.lifecycle.start('mqtt', () => this.mqtt!.start(), () => this.mqtt!.stop());
      if (config.ssdp) {
        await this.startSsdp(parts.udn);
        await this.startMdns(parts.udn);
      }
      const notifier = this.options.notifier;
      if (notifier) {
        let stopSystemd = () => {};
        await lifecycle.start('systemd', () => (stopSystemd = announceReady({
          notifier,
          bus: parts.bus,
          summary: () =>
            `listening on ${config.host}:${this.port}; ${amplifiers.list
              .map((a) => `amplifier ${a.name} ${a.driver.online ? 'online' : 'offline'}`)
              .join(', ')}; ${parts.streams.size} event streams`,
          storeHealthy: () => parts.store.healthy(),
          log: (msg) => logger.warn(msg),
        })), () => stopSystemd());
      }
      return { port: this.port, initialAdmin };
    } catch (err) {
      await lifecycle.stop().catch(() => {});
      throw err;
    }
  }

  /**
   * Graceful stop, the start order reversed: STOPPING=1 to systemd, SSDP byebye, the MQTT bridge says offline, no new
   * connections, requests in flight finish, event streams end, connections close, the driver settles, the store
   * closes. Waits for a start still under way, so nothing it opens is left behind.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.starting;
      await this.lifecycle.stop();
      this.logger.info('stopped');
    })();
    return this.stopping;
  }

  /** URLs are relative so they resolve against whichever address the client used to fetch the description. */
  descriptionXml(): string {
    return renderDescription({
      udn: this.udn,
      friendlyName: this.config.friendlyName,
      manufacturer: 'audio-zone-control',
      modelName: 'azcd',
      modelNumber: VERSION,
      serialNumber: this.udn.replace(/^uuid:/, ''),
      presentationURL: '/',
      apiBaseURL: '/api',
    });
  }

  /** Builds repositories, services, routes and the HTTP server on an open store: no I/O of its own. */
  private compose(store: Store, amplifiers: Amplifiers, secrets: DeviceSecrets): Parts {
    const { config, logger } = this;
    const users = new UsersRepo(store.db);
    const meta = new MetaRepo(store.db);
    const audioRepo = new AudioRepo(store);
    // Each start is a new run of event ids: a client's Last-Event-ID from before a restart is told apart.
    const bus = new EventBus(config.sse.replayEvents, store.transaction(() => meta.nextEventRun()));
    const udn = meta.udn() ?? this.createUdn(store, meta);
    let audio: AudioService | undefined;
    const authentication = new Authentication(store, users, secrets, bus, config);
    if (this.options.passwordHasher) authentication.passwords = this.options.passwordHasher;
    const userAdmin = new UserAdmin(store, users, secrets, bus, authentication, (kind, id) => audio!.exists(kind, id));
    audio = new AudioService(store, audioRepo, users, meta, bus, amplifiers, (ids) => userAdmin.assignmentsDropped(ids), { log: logger });
    const playlists = new PlaylistsService(store, new PlaylistsRepo(store.db), bus, config.exportDir, config.limits);
    const inputs = new InputsService(store, audioRepo, meta, bus, amplifiers);
    const scenes = new ScenesService(store, new ScenesRepo(store.db), audio, bus, config.limits);
    const sleepTimers = new SleepTimers(audio, bus, (level, fields, msg) => logger[level](fields, msg), this.options.clock);
    const streams = new EventStreams(bus, authentication, config.sse, logger, config.limits, audio);
    const bridgeRepo = new BridgeRepo(meta);
    // The supervisor asks the settings only when it starts a bridge, after both exist.
    const mqtt: BridgeSupervisor = (this.mqtt = this.mqttSupervisor(store, bridgeRepo, (): MqttConfig => bridgeSettings.effective(), { audio, scenes, sleepTimers, bus, authentication, amplifiers }));
    const bridgeSettings: BridgeSettings = new BridgeSettings(store, bridgeRepo, secrets, config.mqtt, (name) => authentication.accountState(name), mqtt, (fields, msg) => logger.info(fields, msg));
    // The hottest reads are answered from encoded copies until anything changes: every event (domain or access),
    // a rolled-back write, a restore.
    const readCache = new ReadCache(['GET /api/players', 'GET /api/zones', 'GET /api/users/me']);
    bus.subscribe(() => readCache.clear(), { internal: true });
    store.onRollback(() => readCache.clear());
    const backups = new BackupService(store, new BackupRepo(store), secrets, amplifiers, {
      limits: config.limits,
      friendlyName: config.friendlyName,
      version: VERSION,
      // A restore replaced every row: caches reload, the amplifiers take the restored state, and every session
      // (deleted with the rows) and event stream ends, so each client signs in again and refetches.
      afterRestore: () => {
        readCache.clear();
        audio!.reload();
        sleepTimers.reschedule();
        userAdmin.accountsReplaced();
        bus.forgetHistory();
        streams.closeAll();
        this.mqtt?.resync();
        logger.warn('configuration restored from a backup: every session and event stream was ended');
      },
      initialAdminFile: path.join(config.stateDir, 'initial-admin.txt'),
    });
    const server = new HttpServer({
      logger,
      maxBodyBytes: config.maxBodyBytes,
      authenticate: (credential) => authentication.authenticate(credential),
      fallback: createStaticHandler(),
      readCache,
      hostNames: { mdnsHost: mdnsHostname(udn), extra: config.allowedHosts },
      // While a restore writes the configuration, reads would see half of it and writes would join its transaction.
      unavailable: () => (backups.applying ? 'a restore is replacing the configuration; try again in a few seconds' : undefined),
      // Device state changed by this turn's requests is committed before their answers are written.
      endOfTurn: () => store.flushBatch(),
    });
    server.add([
      ...systemRoutes(
        {
          version: VERSION,
          startedAt: this.startedAt,
          amplifiers: () => amplifiers.list.map((a) => ({ name: a.name, driver: a.driver.name, online: a.driver.online })),
          unavailableZones: () => audio!.availability.silentZones,
          storeHealthy: () => store.healthy(),
          mqtt: () => this.mqtt?.status,
        },
        () => this.openApi(server),
        () => this.descriptionXml(),
      ),
      ...userRoutes(authentication, userAdmin),
      ...playerRoutes(audio),
      ...playlistRoutes(playlists),
      ...inputRoutes(inputs),
      ...backupRoutes(backups, restoreBodyBytes(config.limits)),
      ...sceneRoutes(scenes, sleepTimers),
      ...bridgeSettingsRoutes(bridgeSettings),
      streams.route(),
    ]);
    return { store, amplifiers, bus, udn, authentication, userAdmin, audio, playlists, inputs, scenes, sleepTimers, streams, server };
  }

  private openApi(server: HttpServer): string {
    this.openApiJson ??= JSON.stringify(
      buildOpenApi(server.routes, {
        version: VERSION,
        problemSchema: ProblemSchema,
        eventSchema: T.Union([...DomainEventSchema.anyOf, StreamResetSchema], {
          description: 'The JSON object in the data line of each event-stream message',
        }),
      }),
    );
    return this.openApiJson;
  }

  private async ensureInitialAdmin(adminPassword: string | undefined): Promise<InitialAdmin | null> {
    const file = path.join(this.config.stateDir, 'initial-admin.txt');
    const created = await this.userAdmin.ensureInitialAdmin(adminPassword, (admin) =>
      writePrivateFile(
        file,
        `# azcd first administrator (created ${new Date().toISOString()}); change the password after signing in.\n` +
          `username=${admin.username}\npassword=${admin.password}\napiKey=${admin.apiKey}\n`,
      ),
    );
    return created ? { ...created, file } : null;
  }

  // ---- MQTT bridge (README, Home Assistant) ------------------------------------------------------
  /**
   * The bridge runs with the start-up settings merged with those an admin saved (BridgeSettings), is started once
   * the API listens and stopped (last will replaced by a clean `offline`) before the listener drains and the store
   * closes, and is replaced when the settings change. Starting only begins connecting: a missing broker never delays
   * or fails the daemon.
   */
  private mqttSupervisor(
    store: Store,
    repo: BridgeRepo,
    settings: () => MqttConfig,
    parts: Pick<Parts, 'audio' | 'scenes' | 'sleepTimers' | 'bus' | 'authentication' | 'amplifiers'>,
  ): BridgeSupervisor {
    const { config, logger } = this;
    return new BridgeSupervisor({
      settings,
      identity: () => ({ udn: this.udn, friendlyName: config.friendlyName, version: VERSION, dashboardUrl: dashboardUrl(config.host, this.port) }),
      bridgeDeps: (options) => ({
        audio: parts.audio,
        scenes: parts.scenes,
        sleep: parts.sleepTimers,
        bus: parts.bus,
        caller: () => parts.authentication.callerOfAccount(options.account),
        accountState: () => parts.authentication.accountState(options.account),
        amplifiers: () => parts.amplifiers.list.map((a) => ({ key: a.key, name: a.name, driver: a.driver.name, online: a.driver.online })),
        // Kept per broker: the topics another broker holds are cleared when the bridge is back on that one.
        memory: { load: () => repo.retained(options.url), save: (topics) => store.transaction(() => repo.setRetained(options.url, topics)) },
        clock: this.options.clock ?? systemClock,
        log: logger,
      }),
    });
  }
  // ---- end MQTT bridge ----------------------------------------------------------------------------

  /** Announces on the LAN; a failure to bind is logged by the announcer and the daemon runs on without it. */
  private async startSsdp(udn: string): Promise<void> {
    const { config, logger } = this;
    // Loaded only when enabled: development runs never pay for node-ssdp and its dependencies.
    const { SsdpAnnouncer } = await import('./discovery/ssdp.js');
    const ssdp = new SsdpAnnouncer({
      ...this.options.ssdp,
      udn,
      location: `http://${config.host}:${this.port}/description.xml`,
      interfaces: config.ssdpInterfaces.length ? config.ssdpInterfaces : undefined,
      version: VERSION,
      log: (level, msg, fields) => logger[level]({ component: 'ssdp', ...fields }, msg),
    });
    await this.lifecycle.start('ssdp', () => ssdp.start(), () => ssdp.stop());
  }

  /**
   * Announces over mDNS / DNS-SD beside SSDP (phones, Home Assistant's zeroconf, avahi-browse look there first), on
   * the same interfaces. Probing takes a second or more and goes on while the daemon serves; stop sends the goodbye.
   */
  private async startMdns(udn: string): Promise<void> {
    const { config, logger } = this;
    if (/^(127\.|::1$|localhost$)/.test(config.host)) {
      logger.info({ component: 'mdns', host: config.host }, 'mDNS off: the listener is on loopback, out of the LAN\'s reach');
      return;
    }
    const { MdnsAnnouncer } = await import('./discovery/mdns.js');
    const mdns = new MdnsAnnouncer({
      udn,
      name: config.friendlyName,
      port: this.port,
      host: config.host,
      interfaces: config.ssdpInterfaces.length ? config.ssdpInterfaces : undefined,
      version: VERSION,
      log: (level, msg, fields) => logger[level]({ component: 'mdns', ...fields }, msg),
    });
    await this.lifecycle.start('mdns', () => void mdns.start(), () => mdns.stop());
  }

  /** One driver per configured amplifier; its log lines name the amplifier. Nothing is opened before start. */
  private async createAmplifiers(): Promise<Amplifiers> {
    const { config, logger } = this;
    const list: Amplifier[] = [];
    for (const amplifier of amplifiersOf(config)) {
      const driver = await createDriver(amplifier.driver, {
        ...amplifier.options,
        ...this.options.driverOptions,
        serialPort: amplifier.port,
        log: (level, msg, fields) => logger[level]({ driver: amplifier.driver, amplifier: amplifier.name, ...fields }, msg),
      });
      list.push({ name: amplifier.name, key: amplifier.key, driver });
    }
    return new Amplifiers(list);
  }

  private started(): Parts {
    if (!this.parts) throw new Error('the daemon is not started: call start() first');
    return this.parts;
  }

  private createUdn(store: Store, meta: MetaRepo): string {
    const udn = `uuid:${randomUUID()}`;
    store.transaction(() => meta.setUdn(udn));
    return udn;
  }
}
