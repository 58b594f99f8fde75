// The composition root: opens the store, builds the services on it (compose.ts), starts them in one order and stops
// them in the reverse one: drivers, sleep timers, HTTP and the event stream, the listener, MQTT, SSDP, mDNS, systemd.
// The constructor only stores options; start() does the I/O.

import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { AmplifierDriver, DriverOptions } from '../drivers/driver.js';
import { createDriver } from '../drivers/index.js';
import type { Notifier } from '../native/index.js';
import { type ComposeInput, compose, type Services } from './compose.js';
import { amplifiersOf, type Config } from './config.js';
import type { SsdpAnnouncerOptions } from './discovery/ssdp.js';
import { DeviceSecrets, type PasswordHasher, writePrivateFile } from './domain/accounts/index.js';
import { type Amplifier, Amplifiers, singleAmplifier } from './domain/audio/index.js';
import type { Clock } from './domain/shared/index.js';
import type { Machine } from './http/host-check.js';
import type { InjectRequest, InjectResponse } from './http/inject.js';
import { Lifecycle } from './lifecycle.js';
import type { Logger } from './log.js';
import { prepareStateDir, VERSION } from './paths.js';
import { Store } from './store/db.js';
import { MetaRepo } from './store/meta-repo.js';
import { announceReady } from './systemd.js';

export type { Services };
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
  /** The machine's host name and addresses as the Host allow-list reads them; the OS's unless given (tests). */
  machine?: Machine;
  /** Runs the receivers the players' switches ask for (tests pass one that records them); see ComposeInput. */
  receiverRuntime?: ComposeInput['receiverRuntime'];
  /** Tests only: how the casting runtime runs the receivers (a network namespace); see ComposeInput. */
  castingOptions?: ComposeInput['castingOptions'];
}

export interface Started {
  port: number;
  initialAdmin: InitialAdmin | null;
  services: Services;
}

export class Daemon {
  readonly config: Config;
  readonly logger: Logger;
  startedAt = Date.now();
  port = 0;
  private built: Services | undefined;
  private readonly lifecycle: Lifecycle;
  private starting: Promise<unknown> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: DaemonOptions) {
    this.config = options.config;
    this.logger = options.logger;
    this.lifecycle = new Lifecycle(options.logger);
  }

  /** The services, once start() has built them (tests reach the domain through these). */
  get services(): Services {
    if (!this.built) throw new Error('the daemon is not started: await start() first');
    return this.built;
  }

  /** Sends a request through the HTTP pipeline in-process, without a socket (tests): same routes, auth and errors. */
  inject(request: InjectRequest): Promise<InjectResponse> {
    return this.services.server.inject(request);
  }

  /**
   * Opens the store, starts the amplifier, creates the first admin on an empty database (its credentials file is
   * written before the account exists), listens, then announces over SSDP and tells systemd it is ready. A step
   * that fails stops the ones before it.
   */
  start(adminPassword?: string): Promise<Started> {
    if (this.starting) return Promise.reject(new Error('the daemon was already started'));
    const starting = this.startOnce(adminPassword);
    this.starting = starting.catch(() => {
      // The caller of start() gets the failure; stop() only waits for the start to be over.
    });
    return starting;
  }

  private async startOnce(adminPassword: string | undefined): Promise<Started> {
    const { config, logger, lifecycle } = this;
    this.startedAt = Date.now();
    try {
      const amplifiers = this.options.driver
        ? new Amplifiers([singleAmplifier(this.options.driver)])
        : await this.createAmplifiers();
      // A folder that cannot hold the state stops the start here, with one line naming it and the fix.
      prepareStateDir(config.stateDir);
      // The store's lock is the state folder's: a second azcd stops there, before it reads or creates the device key.
      const opened: OpenedStore = await lifecycle.start(
        'store',
        () => openStore(config.stateDir),
        () => opened.store.close(),
      );
      const { store, identity } = opened;
      const secrets = DeviceSecrets.open(config.stateDir);
      const services = (this.built = compose({
        config,
        logger,
        store,
        identity,
        amplifiers,
        secrets,
        passwordHasher: this.options.passwordHasher,
        clock: this.options.clock,
        startedAt: this.startedAt,
        port: () => this.port,
        machine: this.options.machine,
        receiverRuntime: this.options.receiverRuntime,
        castingOptions: this.options.castingOptions,
      }));
      await lifecycle.start(
        'amplifier',
        () => services.hardware.start(),
        async () => {
          await Promise.race([
            services.hardware.settled(),
            new Promise((resolve) => setTimeout(resolve, DRIVER_SETTLE_MS).unref()),
          ]);
          await services.hardware.stop();
        },
      );
      // Stream players route through the amplifiers (announcements) and stop before them: an announcement under way
      // puts its zones back first.
      await lifecycle.start(
        'playback',
        () => services.playback.start(),
        () => services.playback.stop(),
      );
      // A cast's rooms are woken from the first cast on, so they are followed before the receivers start.
      await lifecycle.start(
        'cast rooms',
        () => services.castRooms.start(),
        () => services.castRooms.stop(),
      );
      // Each stream player's receivers follow its switches once its engine has begun.
      await lifecycle.start(
        'receivers',
        () => services.receivers.start(),
        async () => {
          services.receivers.stop();
          // Every receiver stops and lets go of its player's output before the players' MPDs stop.
          await services.casting?.stop();
        },
      );
      // Timers power zones off through the amplifiers, so they run only while those do.
      await lifecycle.start(
        'sleep timers',
        () => services.sleepTimers.start(),
        () => services.sleepTimers.stop(),
      );
      // The uWS app exists since compose(); closing it ends every connection that is left.
      await lifecycle.start(
        'http',
        () => {
          // Nothing to start: the app exists since compose(); the step is here for its stop.
        },
        () => services.server.close(),
      );
      await lifecycle.start(
        'event stream',
        () => {
          // Nothing to start: streams open with their requests; the step is here for its stop.
        },
        () => services.streams.dispose(),
      );
      const initialAdmin = await this.ensureInitialAdmin(services, adminPassword);
      this.port = await lifecycle.start(
        'listener',
        () => services.server.listen(config.host, config.port),
        async () => {
          services.server.stopListening();
          await services.server.drain(SHUTDOWN_DRAIN_MS);
        },
      );
      logger.info(
        {
          host: config.host,
          port: this.port,
          driver: amplifiers.list[0]!.driver.name,
          amplifiers: amplifiers.list.map((a) => a.name),
          uws: services.server.uwsSource,
        },
        'listening',
      );
      await lifecycle.start(
        'mqtt',
        () => services.mqtt.start(),
        () => services.mqtt.stop(),
      );
      if (config.ssdp) {
        await this.startSsdp(services.udn);
        await this.startMdns(services.udn);
      }
      const notifier = this.options.notifier;
      if (notifier) {
        let stopSystemd = () => {
          // Replaced by announceReady's stop once systemd was told.
        };
        await lifecycle.start(
          'systemd',
          () =>
            (stopSystemd = announceReady({
              notifier,
              bus: services.bus,
              summary: () =>
                `listening on ${config.host}:${this.port}; ${amplifiers.list
                  .map((a) => `amplifier ${a.name} ${a.driver.online ? 'online' : 'offline'}`)
                  .join(', ')}; ${services.streams.size} event streams`,
              storeHealthy: () => services.store.healthy(),
              log: (msg) => logger.warn(msg),
            })),
          () => stopSystemd(),
        );
      }
      return { port: this.port, initialAdmin, services };
    } catch (err) {
      await lifecycle.stop().catch(() => {
        // The start's own error is the one to throw; a step that fails to stop logs its own.
      });
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

  private async ensureInitialAdmin(
    services: Services,
    adminPassword: string | undefined,
  ): Promise<InitialAdmin | null> {
    const file = path.join(this.config.stateDir, 'initial-admin.txt');
    const created = await services.users.ensureInitialAdmin(adminPassword, (admin) =>
      writePrivateFile(
        file,
        `# azcd first administrator (created ${new Date().toISOString()}); change the password after signing in.\n` +
          `username=${admin.username}\npassword=${admin.password}\napiKey=${admin.apiKey}\n`,
      ),
    );
    return created ? { ...created, file } : null;
  }

  /** Announces on the LAN; a failure to bind is logged by the announcer and the daemon runs on without it. */
  private async startSsdp(udn: string): Promise<void> {
    const { config, logger } = this;
    // Loaded only when enabled: development runs never pay for node-ssdp and its dependencies.
    const { SsdpAnnouncer } = await loadAnnouncers();
    const ssdp = new SsdpAnnouncer({
      ...this.options.ssdp,
      udn,
      location: `http://${config.host}:${this.port}/description.xml`,
      interfaces: config.ssdpInterfaces.length ? config.ssdpInterfaces : undefined,
      version: VERSION,
      log: (level, msg, fields) => logger[level]({ component: 'ssdp', ...fields }, msg),
    });
    await this.lifecycle.start(
      'ssdp',
      () => ssdp.start(),
      () => ssdp.stop(),
    );
  }

  /**
   * Announces over mDNS / DNS-SD beside SSDP (phones, Home Assistant's zeroconf, avahi-browse look there first), on
   * the same interfaces. Probing takes a second or more and goes on while the daemon serves; stop sends the goodbye.
   */
  private async startMdns(udn: string): Promise<void> {
    const { config, logger } = this;
    if (/^(127\.|::1$|localhost$)/.test(config.host)) {
      logger.info(
        { component: 'mdns', host: config.host },
        "mDNS off: the listener is on loopback, out of the LAN's reach",
      );
      return;
    }
    const { MdnsAnnouncer } = await loadAnnouncers();
    const mdns = new MdnsAnnouncer({
      udn,
      name: config.friendlyName,
      port: this.port,
      host: config.host,
      interfaces: config.ssdpInterfaces.length ? config.ssdpInterfaces : undefined,
      version: VERSION,
      log: (level, msg, fields) => logger[level]({ component: 'mdns', ...fields }, msg),
    });
    await this.lifecycle.start(
      'mdns',
      () => void mdns.start(),
      () => mdns.stop(),
    );
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
        log: (level, msg, fields) =>
          logger[level]({ driver: amplifier.driver, amplifier: amplifier.name, ...fields }, msg),
      });
      list.push({ name: amplifier.name, key: amplifier.key, driver });
    }
    return new Amplifiers(list);
  }
}

/** The announcers' module (node-ssdp and ciao bundled in), loaded the first time SSDP or mDNS starts. */
function loadAnnouncers(): Promise<typeof import('./discovery/announcers.js')> {
  return keepingStackHooks(() => import('./discovery/announcers.js'));
}

/**
 * Runs `load` (an import) and puts back the stack-trace hooks it replaced. ciao installs source-map-support as it loads
 * (`Error.prepareStackTrace`, `process.emit`): each stack formatted after that reads and parses the bundle's source maps
 * and keeps them, ~5 MB of an idle appliance's memory (ARCHITECTURE.md, "Memory"). The daemon's stacks name the
 * bundle's lines as they do without mDNS.
 */
async function keepingStackHooks<T>(load: () => Promise<T>): Promise<T> {
  const { prepareStackTrace } = Error;
  const { emit } = process;
  try {
    return await load();
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    process.emit = emit;
  }
}

/**
 * The store's start step: opens the database, and writes what belongs to the store besides: the device's UDN on the
 * first start, and one more run of event ids on every start (see EventBus). A failure closes what it opened.
 */
interface OpenedStore {
  store: Store;
  identity: { udn: string; eventRun: number };
}

function openStore(stateDir: string): OpenedStore {
  const store = new Store(path.join(stateDir, 'azc.db'));
  try {
    const meta = new MetaRepo(store.db);
    const identity = store.transaction(() => {
      let udn = meta.udn();
      if (udn === undefined) {
        udn = `uuid:${randomUUID()}`;
        meta.setUdn(udn);
      }
      return { udn, eventRun: meta.nextEventRun() };
    });
    return { store, identity };
  } catch (err) {
    store.close();
    throw err;
  }
}
