// The composition root: builds the store, services, driver and HTTP server, and starts/stops them in order.
import { VERSION } from './paths.js';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { Store } from './store/db.js';
import { UsersRepo } from './store/users-repo.js';
import { AudioRepo } from './store/audio-repo.js';
import { PlaylistsRepo } from './store/playlists-repo.js';
import { DeviceSecrets, writePrivateFile } from './domain/secrets.js';
import { EventBus, DomainEventSchema, StreamResetSchema } from './domain/events.js';
import { Type as T } from '@sinclair/typebox';
import { AccountsService } from './domain/accounts.js';
import { AudioService } from './domain/audio.js';
import { PlaylistsService } from './domain/playlists.js';
import { InputsService } from './domain/inputs.js';
import { HttpServer } from './http/server.js';
import { EventStreams } from './http/sse.js';
import { buildOpenApi } from './http/openapi.js';
import { userRoutes } from './api/users.js';
import { playerRoutes } from './api/players.js';
import { playlistRoutes } from './api/playlists.js';
import { inputRoutes } from './api/input-devices.js';
import { systemRoutes } from './api/system.js';
import { ProblemSchema } from './api/schemas.js';
import { createDriver } from '../drivers/index.js';
import type { AmplifierDriver } from '../drivers/driver.js';
import { renderDescription } from './discovery/description.js';
import { createStaticHandler } from './http/static.js';

export { VERSION };

export interface InitialAdmin {
  username: string;
  password: string;
  apiKey: string;
  file: string;
}

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  /** A ready driver instead of one built from the configuration (tests inject the simulated one). */
  driver?: AmplifierDriver;
  adminPassword?: string;
}

export class Daemon {
  readonly store: Store;
  readonly bus: EventBus;
  readonly accounts: AccountsService;
  readonly audio: AudioService;
  readonly playlists: PlaylistsService;
  readonly inputs: InputsService;
  readonly streams: EventStreams;
  readonly server: HttpServer;
  readonly udn: string;
  readonly startedAt = Date.now();
  port = 0;
  private stopping: Promise<void> | undefined;

  private constructor(readonly config: Config, readonly logger: Logger, readonly driver: AmplifierDriver) {
    this.store = new Store(path.join(config.stateDir, 'azc.db'));
    const users = new UsersRepo(this.store.db);
    const audioRepo = new AudioRepo(this.store, [driver.name]);
    const secrets = DeviceSecrets.open(config.stateDir);
    this.bus = new EventBus(config.sse.replayEvents);
    this.udn = users.getMeta('udn') ?? this.createUdn(users);
    let audio: AudioService | undefined;
    this.accounts = new AccountsService(this.store, users, secrets, this.bus, config, (kind, id) => audio!.exists(kind, id));
    audio = this.audio = new AudioService(this.store, audioRepo, users, this.bus, driver, (ids) => this.accounts.assignmentsDropped(ids));
    this.playlists = new PlaylistsService(this.store, new PlaylistsRepo(this.store.db), this.bus, config.exportDir, config.limits);
    this.inputs = new InputsService(this.store, audioRepo, users, this.bus, driver.name, () =>
      driver.describe().inputs.map((i) => i.channel),
    );
    this.streams = new EventStreams(this.bus, this.accounts, config.sse, logger, config.limits);
    this.server = new HttpServer({
      logger,
      maxBodyBytes: config.maxBodyBytes,
      authenticate: (credential) => this.accounts.authenticate(credential),
      fallback: createStaticHandler(),
    });
    this.server.add([
      ...systemRoutes(
        {
          version: VERSION,
          startedAt: this.startedAt,
          drivers: () => [{ name: driver.name, online: driver.online }],
          storeHealthy: () => this.store.healthy(),
        },
        () => this.openApiJson,
        () => this.descriptionXml(),
      ),
      ...userRoutes(this.accounts),
      ...playerRoutes(this.audio),
      ...playlistRoutes(this.playlists),
      ...inputRoutes(this.inputs),
      this.streams.route(),
    ]);
    this.openApiJson = JSON.stringify(
      buildOpenApi(this.server.routes, {
        version: VERSION,
        problemSchema: ProblemSchema,
        eventSchema: T.Union([...DomainEventSchema.anyOf, StreamResetSchema], {
          description: 'The JSON object in the data line of each event-stream message',
        }),
      }),
    );
  }

  private readonly openApiJson: string;

  static async create(options: DaemonOptions): Promise<Daemon> {
    const { config } = options;
    const driver =
      options.driver ??
      (await createDriver(config.driver, {
        serialPort: config.serialPort,
        pollIntervalMs: config.pollIntervalMs,
        log: (level, msg, fields) => options.logger[level]({ driver: config.driver, ...fields }, msg),
      }));
    return new Daemon(config, options.logger, driver);
  }

  /** Starts the driver, creates the first admin on an empty database, then listens. */
  async start(adminPassword?: string): Promise<{ port: number; initialAdmin: InitialAdmin | null }> {
    await this.audio.start();
    const file = path.join(this.config.stateDir, 'initial-admin.txt');
    const created = await this.accounts.ensureInitialAdmin(adminPassword, (admin) =>
      writePrivateFile(
        file,
        `# azcd first administrator (created ${new Date().toISOString()}); change the password after signing in.\n` +
          `username=${admin.username}\npassword=${admin.password}\napiKey=${admin.apiKey}\n`,
      ),
    );
    const initialAdmin: InitialAdmin | null = created ? { ...created, file } : null;
    this.port = await this.server.listen(this.config.host, this.config.port);
    this.logger.info({ host: this.config.host, port: this.port, driver: this.driver.name, uws: this.server.uwsSource }, 'listening');
    return { port: this.port, initialAdmin };
  }

  /** Graceful stop: no new connections, in-flight writes finish, streams close, driver settles, store closes. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.server.stopListening();
      await this.server.drain(5000);
      this.streams.dispose();
      this.server.close();
      await Promise.race([this.driver.settled(), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      await this.audio.stop();
      this.store.close();
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
      deviceType: 'urn:audio-zone-control:device:AudioZoneController:1',
    });
  }

  private createUdn(users: UsersRepo): string {
    const udn = `uuid:${randomUUID()}`;
    users.setMeta('udn', udn);
    return udn;
  }
}
