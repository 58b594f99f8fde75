// The composition root's wiring: repositories, the domain services, routes, the HTTP server, the event stream and the
// MQTT bridge's supervisor, built on an open store into one typed Services object. Nothing here writes, reads state,
// opens a socket or starts a timer (the uWS binary is loaded, and listens only when told): app.ts opens the store
// before and starts the services after, in order.
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { Type as T } from '@sinclair/typebox';
import { loadPlaybackEngines, playbackEngineMissing } from '../drivers/index.js';
import { announcementRoutes } from './api/announcements.js';
import { artworkRoutes } from './api/artwork.js';
import { backupRoutes } from './api/backup.js';
import { castSettingsRoutes } from './api/cast-settings.js';
import { inputRoutes } from './api/input-devices.js';
import { libraryRoutes } from './api/library.js';
import { playbackRoutes } from './api/playback.js';
import { playerRoutes } from './api/players.js';
import { playlistRoutes } from './api/playlists.js';
import { receiverRoutes } from './api/receivers.js';
import { sceneRoutes } from './api/scenes.js';
import { ProblemSchema } from './api/schemas.js';
import { bridgeSettingsRoutes } from './api/settings.js';
import { systemRoutes } from './api/system.js';
import { userRoutes } from './api/users.js';
import { zoneRoutes } from './api/zones.js';
import { type Config, defaultMusicDir, type MqttConfig } from './config.js';
import { renderDescription } from './discovery/description.js';
import { mdnsHostname } from './discovery/mdns-hostname.js';
import { Authentication, type DeviceSecrets, type PasswordHasher, UserAdmin } from './domain/accounts/index.js';
import { type Amplifiers, type Audio, createAudio, outputOf } from './domain/audio/index.js';
import { BackupService, restoreBodyBytes } from './domain/backup/index.js';
import {
  Casting,
  type CastingDeps,
  CastRooms,
  type EngineFactory,
  Playback,
  type ReceiverRuntime,
  ReceiverSwitches,
} from './domain/playback/index.js';
import { PlaylistsService } from './domain/playlists/index.js';
import { ScenesService, SleepTimers } from './domain/scenes/index.js';
import { BridgeSettings } from './domain/settings/index.js';
import {
  type Caller,
  type Clock,
  DomainEventSchema,
  EventBus,
  StreamResetSchema,
  systemClock,
} from './domain/shared/index.js';
import { type Machine, OS_MACHINE } from './http/host-check.js';
import { buildOpenApi } from './http/openapi.js';
import { CACHED_ROUTES, ReadCache } from './http/read-cache.js';
import { HttpServer } from './http/server.js';
import { EventStreams } from './http/sse.js';
import { createStaticHandler } from './http/static.js';
import type { Logger } from './log.js';
import { dashboardUrl } from './mqtt/options.js';
import { BridgeSupervisor } from './mqtt/supervisor.js';
import { VERSION } from './paths.js';
import { AudioRepo } from './store/audio-repo.js';
import { BackupRepo } from './store/backup-repo.js';
import { BridgeRepo } from './store/bridge-repo.js';
import { CastSettingsRepo } from './store/cast-settings-repo.js';
import type { Store } from './store/db.js';
import { MetaRepo } from './store/meta-repo.js';
import { PlaylistsRepo } from './store/playlists-repo.js';
import { ReceiversRepo } from './store/receivers-repo.js';
import { ScenesRepo } from './store/scenes-repo.js';
import { UsersRepo } from './store/users-repo.js';

/** Everything the daemon runs, built once its store is open: what app.ts starts and stops, and what tests drive. */
export interface Services extends Audio {
  store: Store;
  bus: EventBus;
  /** The device's UPnP UDN (`uuid:…`), kept in the database since the first start. */
  udn: string;
  authentication: Authentication;
  users: UserAdmin;
  playlists: PlaylistsService;
  scenes: ScenesService;
  sleepTimers: SleepTimers;
  backups: BackupService;
  bridgeSettings: BridgeSettings;
  streams: EventStreams;
  server: HttpServer;
  /** Runs the MQTT bridge on the settings that apply now (started once the API listens). */
  mqtt: BridgeSupervisor;
  /** Stream players: their engines, transport, library and announcements (started after the amplifiers). */
  playback: Playback;
  /** Which receivers each stream player runs (started after the stream players). */
  receivers: ReceiverSwitches;
  /** Runs them (unless a test gave its own runtime): stopped with the switches, before the stream players. */
  casting: Casting | undefined;
  /** Wakes each stream player's rooms for a cast, and powers them off after it when set to. */
  castRooms: CastRooms;
}

export interface ComposeInput {
  config: Config;
  logger: Logger;
  store: Store;
  /** Written by the store's start step: the device's UDN and this start's run of event ids. */
  identity: { udn: string; eventRun: number };
  amplifiers: Amplifiers;
  secrets: DeviceSecrets;
  /** Password hashing; production scrypt cost unless given (tests pass the same format at a lower cost). */
  passwordHasher?: PasswordHasher;
  /** Time for the sleep timers and the bridge; the system clock unless given. */
  clock?: Clock;
  startedAt: number;
  /** The port the API listens on, once it does (the bridge's link to the dashboard). */
  port(): number;
  /** Where the machine's host name and addresses are read (the Host allow-list, the hub's link); the OS's unless given. */
  machine?: Machine;
  /** Runs the receivers the players' switches ask for: the casting runtime, unless a test gives one that starts none. */
  receiverRuntime?: ReceiverRuntime;
  /**
   * Tests only: the casting runtime runs each receiver through `prefix` (`ip netns exec <name>`, a network namespace
   * the test made, as libupnp refuses loopback) and has it listen on `listenHost` and `listenInterface` (the
   * namespace's address and interface) instead of config.host and its interface, and runs a kind's stand-in from
   * `kinds` (a receiver whose program is a script). The daemon never sets it.
   */
  castingOptions?: Partial<Pick<CastingDeps, 'prefix' | 'listenHost' | 'listenInterface' | 'kinds'>>;
}

/** Builds every service on the open store; see Services. */
export function compose(input: ComposeInput): Services {
  const { config, logger, store, identity, amplifiers, secrets } = input;
  const { udn } = identity;
  const users = new UsersRepo(store.db);
  const meta = new MetaRepo(store.db);
  const audioRepo = new AudioRepo(store);
  // Each start is a new run of event ids: a client's Last-Event-ID from before a restart is told apart.
  const bus = new EventBus(config.sse.replayEvents, identity.eventRun);
  bus.onSubscriberError = (owner, eventType, err) =>
    logger.error({ owner, eventType, err }, 'an event subscriber failed; the others got the event');
  const authentication = new Authentication(store, users, secrets, bus, config);
  if (input.passwordHasher) authentication.passwords = input.passwordHasher;
  // Every service is built after what it names: a closure here names only services that exist. Where two refer to
  // each other, one hears the other through the bus (a deleted player or zone leaves assignment lists:
  // `assignments.dropped`, which UserAdmin follows) or is handed the other once both exist (attachPlayback).
  // Life-cycle events reach the services that subscribed to them, each under its own name: `configuration.replaced`
  // after a restore (DELIVERY_STAGES: the stored rows reread first, what clients hold ended last), `player.deleted`.
  const audio: Audio = createAudio({ store, repo: audioRepo, users, meta, bus, amplifiers, log: logger });
  const targetExists = (kind: 'player' | 'zone', id: string) =>
    (kind === 'player' ? audio.players : audio.zones).exists(id);
  const userAdmin = new UserAdmin(
    store,
    users,
    secrets,
    bus,
    authentication,
    targetExists,
    Date.now,
    path.join(config.stateDir, 'initial-admin.txt'),
  );
  const playlists = new PlaylistsService(
    store,
    new PlaylistsRepo(store.db),
    bus,
    config.exportDir,
    config.limits,
    config.playback.streamHosts,
  );
  const clock = input.clock ?? systemClock;
  const playback = new Playback({
    repo: audioRepo,
    audio,
    playlists,
    bus,
    clock,
    engines: engineDeps(config, logger),
    limits: config.limits,
    announcementMaxMs: config.playback.announcementMaxMs,
    log: logger,
  });
  // Playback plays what audio routes: audio asks it about stream players from now on.
  audio.attachPlayback(playback.hooks);
  // A cast taking or leaving a player's output wakes its rooms or starts their power-off.
  const castRooms = new CastRooms({
    store,
    repo: new CastSettingsRepo(store.db),
    rows: audioRepo,
    players: audio.players,
    zones: audio.zones,
    caller: castCaller,
    bus,
    clock,
    log: logger.child({ component: 'cast-rooms' }),
  });
  // The receivers a player's switches ask for run in the casting runtime, which tells the player's playback (a cast's
  // titles) and, handed them once both exist, the switches (their events) what changed.
  // Tests may give a runtime of their own (one that starts no program); the daemon's is the casting runtime.
  const casting = input.receiverRuntime
    ? undefined
    : new Casting({
        stateDir: config.stateDir,
        listenHost: config.host,
        ...listenInterface(config.host),
        ...input.castingOptions,
        player: (id) => {
          const row = audioRepo.player(id);
          return row && { name: row.name, output: outputOf(row) };
        },
        pauseMpd: (id) => playback.pauseForCast(id),
        // An ALSA player's MPD plays into its private FIFO while the daemon holds the device for its receivers.
        routeMpd: (id, output) => playback.engines.reroute(id, output),
        // A sender's volume is the rooms' volume: the player's zones, each within its limit, as every path sets them.
        setGroupVolume: (id, level) => audio.players.setVolume(castCaller(id), id, level),
        onNowPlaying: (id) => playback.castChanged(id),
        onHolder: (id, holder) => castRooms.holderChanged(id, holder),
        clock,
        log: logger.child({ component: 'casting' }),
      });
  if (casting) {
    playback.attachCasting(casting);
    // A volume changed here (the dashboard, a keypad, Home Assistant) goes back to the sender of the cast holding
    // the player's output, where its protocol allows.
    bus.subscribe('casting', (event) => {
      if (event.type === 'player.volumeChanged')
        casting.groupVolumeChanged(event.payload.playerId, event.payload.volume);
    });
  }
  const runtime: ReceiverRuntime = casting ?? (input.receiverRuntime as ReceiverRuntime);
  const receivers = new ReceiverSwitches({
    store,
    repo: new ReceiversRepo(store.db),
    players: audioRepo,
    playerViews: audio.players,
    bus,
    runtime,
    log: logger,
  });
  casting?.attachListener((id, kind) => receivers.stateChanged(id, kind));
  const sceneLookups = { zone: audio.zones.get.bind(audio.zones), player: audio.players.get.bind(audio.players) };
  const scenes = new ScenesService(store, new ScenesRepo(store.db), audio.zoneStates, sceneLookups, bus, config.limits);
  const sleepTimers = new SleepTimers(audio.zoneSleep, bus, (level, fields, msg) => logger[level](fields, msg), clock);
  const streams = new EventStreams(bus, authentication, config.sse, logger, config.limits, {
    playerVolumeFor: (c, id) => audio.players.volumeFor(c, id),
  });
  // Serial drivers that poll for keypad changes read them sooner while someone watches the event stream (docs/drivers.md).
  streams.onCount = (count) => {
    for (const amplifier of amplifiers.list) amplifier.driver.watching?.(count > 0);
  };
  const bridgeRepo = new BridgeRepo(meta);
  // The settings make the supervisor they control, handing it themselves (it asks them when it starts a bridge).
  const bridgeSettings = new BridgeSettings<BridgeSupervisor>(
    store,
    bridgeRepo,
    secrets,
    config.mqtt,
    (name) => authentication.accountState(name),
    (settings) =>
      mqttSupervisor(
        { ...input, audio, scenes, sleepTimers, playback, receivers, bus, authentication, clock },
        store,
        bridgeRepo,
        (): MqttConfig => settings.effective(),
      ),
    (fields, msg) => logger.info(fields, msg),
  );
  const mqtt = bridgeSettings.control;
  // The hottest reads are answered from encoded copies until anything changes: every event (domain or internal: an
  // access change, a restore), a rolled-back write.
  const readCache = new ReadCache(CACHED_ROUTES);
  bus.subscribe('read-cache', (event) => readCache.changed(event), { internal: true });
  store.onRollback(() => readCache.clear());
  const backups = new BackupService(store, () => new BackupRepo(store), secrets, amplifiers, {
    limits: config.limits,
    friendlyName: config.friendlyName,
    version: VERSION,
    // A restore replaced every row: it publishes `configuration.replaced`, which each service follows itself.
    bus,
    initialAdminFile: path.join(config.stateDir, 'initial-admin.txt'),
  });
  bus.subscribe(
    'restore-log',
    (event) => {
      if (event.type === 'configuration.replaced')
        logger.warn('configuration restored from a backup: every session and event stream was ended');
    },
    { internal: true, stage: 'clients' },
  );
  const server = new HttpServer({
    logger,
    maxBodyBytes: config.maxBodyBytes,
    authenticate: (credential) => authentication.authenticate(credential),
    fallback: createStaticHandler(),
    readCache,
    hostNames: {
      mdnsHost: mdnsHostname(udn),
      mdnsAnnounced: config.ssdp,
      extra: config.allowedHosts,
      machine: input.machine,
    },
    // While a restore writes the configuration, reads would see half of it and writes would join its transaction.
    unavailable: () =>
      backups.applying ? 'a restore is replacing the configuration; try again in a few seconds' : undefined,
    // Device state changed by this turn's requests is committed before their answers are written, and the events of
    // the turn leave for the streams then too: nothing is left for the next loop iteration, so the poll after this
    // turn waits for the clients' next requests and takes them up together.
    endOfTurn: () => {
      store.flushBatch();
      streams.flushNow();
    },
  });
  let openApiJson: string | undefined;
  server.add([
    ...systemRoutes(
      {
        version: VERSION,
        startedAt: input.startedAt,
        amplifiers: () =>
          amplifiers.list.map((a) => ({ name: a.name, driver: a.driver.name, online: a.driver.online })),
        unavailableZones: () => audio.availability.silentZones,
        storeHealthy: () => store.healthy(),
        mqtt: () => mqtt.status,
      },
      // Built on its first request: start never needs it.
      () => (openApiJson ??= openApiDocument(server)),
      () => descriptionXml(udn, config.friendlyName),
    ),
    ...userRoutes(authentication, userAdmin),
    ...playerRoutes(audio.players, { outputKind: config.playback.defaultOutput }),
    ...zoneRoutes(audio.zones),
    ...playlistRoutes(playlists),
    ...playbackRoutes(playback.transport),
    ...libraryRoutes(playback.library),
    ...announcementRoutes(playback.announcements),
    ...receiverRoutes(receivers),
    ...artworkRoutes(playback.transport),
    ...castSettingsRoutes(castRooms),
    ...inputRoutes(audio.inputs),
    ...backupRoutes(backups, restoreBodyBytes(config.limits)),
    ...sceneRoutes(scenes, sleepTimers),
    ...bridgeSettingsRoutes(bridgeSettings),
    streams.route(),
  ]);
  return {
    ...audio,
    store,
    bus,
    udn,
    authentication,
    users: userAdmin,
    playlists,
    scenes,
    sleepTimers,
    backups,
    bridgeSettings,
    streams,
    server,
    mqtt,
    playback,
    receivers,
    casting,
    castRooms,
  };
}

/**
 * How stream players' engines are made: one MPD each, its files under `<stateDir>/players/<id>/`, playing from the
 * music folder (the default one, inside the state folder, is created when missing).
 */
function engineDeps(config: Config, logger: Logger) {
  const { stateDir } = config;
  const { musicDir, mpdPath, streamHosts } = config.playback;
  const log = logger.child({ component: 'mpd' });
  // The engine's code is loaded with the first stream player (ARCHITECTURE.md, "Memory").
  const factory: EngineFactory = async ({ id, output }) =>
    (await loadPlaybackEngines()).createPlaybackEngine({
      id,
      stateDir,
      musicDir,
      output,
      mpdPath,
      streamHosts,
      log: (level, msg, fields) => log[level](fields ?? {}, msg),
    });
  return {
    factory,
    missing: () => playbackEngineMissing({ mpdPath }),
    folderOf: (id: string) => path.join(stateDir, 'players', id),
    musicDir,
    createMusicDir: musicDir === defaultMusicDir(stateDir),
  };
}

function openApiDocument(server: HttpServer): string {
  return JSON.stringify(
    buildOpenApi(server.routes, {
      version: VERSION,
      problemSchema: ProblemSchema,
      eventSchema: T.Union([...DomainEventSchema.anyOf, StreamResetSchema], {
        description: 'The JSON object in the data line of each event-stream message',
      }),
    }),
  );
}

/** URLs are relative so they resolve against whichever address the client used to fetch the description. */
function descriptionXml(udn: string, friendlyName: string): string {
  return renderDescription({
    udn,
    friendlyName,
    manufacturer: 'audio-zone-control',
    modelName: 'azcd',
    modelNumber: VERSION,
    serialNumber: udn.replace(/^uuid:/, ''),
    presentationURL: '/',
    apiBaseURL: '/api',
  });
}

/**
 * The bridge runs with the start-up settings merged with those an admin saved (BridgeSettings), is started once
 * the API listens and stopped (last will replaced by a clean `offline`) before the listener drains and the store
 * closes, and is replaced when the settings change. Starting only begins connecting: a missing broker never delays
 * or fails the daemon.
 */
function mqttSupervisor(
  parts: Pick<ComposeInput, 'config' | 'logger' | 'identity' | 'amplifiers' | 'port' | 'machine'> & {
    audio: Audio;
    scenes: ScenesService;
    sleepTimers: SleepTimers;
    playback: Playback;
    receivers: ReceiverSwitches;
    bus: EventBus;
    authentication: Authentication;
    clock: Clock;
  },
  store: Store,
  repo: BridgeRepo,
  settings: () => MqttConfig,
): BridgeSupervisor {
  const { config, logger, audio } = parts;
  // On every address, the hub's link names the appliance by a name its Host allow-list accepts: the mDNS name while
  // it is announced, else the machine's host name.
  const machineName = () =>
    config.ssdp ? `${mdnsHostname(parts.identity.udn)}.local` : (parts.machine ?? OS_MACHINE).hostname();
  return new BridgeSupervisor({
    settings,
    identity: () => ({
      udn: parts.identity.udn,
      friendlyName: config.friendlyName,
      version: VERSION,
      dashboardUrl: dashboardUrl(config.host, parts.port(), machineName()),
    }),
    bridgeDeps: (options) => ({
      audio: { players: audio.players, zones: audio.zones },
      scenes: parts.scenes,
      sleep: parts.sleepTimers,
      playback: parts.playback.transport,
      receivers: parts.receivers,
      bus: parts.bus,
      caller: () => parts.authentication.callerOfAccount(options.account),
      accountState: () => parts.authentication.accountState(options.account),
      amplifiers: () =>
        parts.amplifiers.list.map((a) => ({
          key: a.key,
          name: a.name,
          driver: a.driver.name,
          online: a.driver.online,
        })),
      // Kept per broker: the topics another broker holds are cleared when the bridge is back on that one.
      memory: {
        load: () => repo.retained(options.url),
        save: (topics) => store.transaction(() => repo.setRetained(options.url, topics)),
      },
      clock: parts.clock,
      log: logger,
    }),
    bus: parts.bus,
  });
}

/** The interface the daemon serves on, for a receiver that takes a name (AirPlay's mDNS, UPnP); none for every address. */
function listenInterface(host: string): { listenInterface?: string } {
  for (const [name, addresses] of Object.entries(networkInterfaces())) {
    if (addresses?.some((address) => address.address === host && !address.internal)) return { listenInterface: name };
  }
  return {};
}

/**
 * Who sets the rooms' volume for a sender, and wakes and powers off the rooms for a cast: the appliance itself, on
 * the player's zones (the Admin who switched the receiver on let any sender on the LAN play into the player); each
 * zone stays within its limit and starts at its turn-on volume as on every path.
 */
function castCaller(playerId: string): Caller {
  return {
    userId: 'cast',
    username: `cast into player ${playerId}`,
    role: 'Admin',
    playerIds: new Set([playerId]),
    zoneIds: new Set(),
    credential: { kind: 'account' },
  };
}
