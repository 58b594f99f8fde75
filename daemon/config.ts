// Typed configuration: defaults < JSON config file < AZC_* environment < command-line flags.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DRIVER_NAMES } from '../drivers/index.js';
import { parseTcpPort } from '../drivers/port.js';
import { XANTECH_MODELS } from '../drivers/xantech/protocol.js';
import { nameProblem } from './names.js';

export interface Config {
  host: string;
  port: number;
  stateDir: string;
  /** Where playlist exports go; `<stateDir>/exports` unless set. */
  exportDir: string;
  driver: string;
  serialPort: string | undefined;
  /** Amplifier poll interval for serial drivers (ms). */
  pollIntervalMs: number;
  /**
   * The amplifiers listed in the config file (README, Several amplifiers); empty: the one amplifier of `driver` and
   * `serialPort`. Use amplifiersOf(config) for the list the daemon runs either way.
   */
  amplifiers: AmplifierConfig[];
  ssdp: boolean;
  /**
   * Host names the API answers under besides IP addresses, localhost and the mDNS name (a reverse proxy's, a DNS
   * name of the appliance); lower case. Any other Host gets 421 (DNS rebinding).
   */
  allowedHosts: string[];
  /** Network interfaces SSDP announces on (empty: all IPv4 interfaces). */
  ssdpInterfaces: string[];
  friendlyName: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Request body cap in bytes (413 above). */
  maxBodyBytes: number;
  sessionIdleMs: number;
  sessionAbsoluteMs: number;
  /** Failed logins allowed per username/address before back-off starts. */
  loginFreeFailures: number;
  loginBaseDelayMs: number;
  loginMaxDelayMs: number;
  sse: {
    retryMs: number;
    pingIntervalMs: number;
    maxBufferedBytes: number;
    replayEvents: number;
    /** How often open streams re-check their credential (expiry, revocation safety net). */
    recheckIntervalMs: number;
  };
  /** Caps that keep one user, whatever its role, from starving the others (README, Security). */
  limits: {
    /** Open event streams per user (a 429 beyond it). */
    streamsPerUser: number;
    /** Open event streams in all, across users (a 503 beyond it); keeps file descriptors for the API. */
    streamsTotal: number;
    /** Playlists on the appliance (a 409 beyond it). */
    playlists: number;
    /** Tracks in one playlist (a 409 beyond it). */
    tracksPerPlaylist: number;
    /** Files kept in the export directory (a 409 beyond it; replacing an existing file is always allowed). */
    exportFiles: number;
    /** Bytes kept in the export directory in all (a 409 beyond it). */
    exportBytes: number;
    /** Playlists per page of GET /api/playlists when the client names no limit, and the most it may ask for. */
    playlistPageDefault: number;
    playlistPageMax: number;
    /** Saved scenes (a 409 beyond it; the undo slot does not count). */
    scenes: number;
    /** Request body cap of POST /api/restore, which carries a whole backup (413 above); other routes keep maxBodyBytes. */
    restoreBytes: number;
  };
  /** The MQTT bridge to Home Assistant and other hubs (README, Home Assistant); off while `url` is empty. */
  mqtt: MqttConfig;
}

/** One amplifier the daemon drives; `key` identifies its zones and inputs in the store. */
export interface AmplifierConfig {
  /** Shown in the API (`output.amplifier`), health and Home Assistant; unique, case-insensitive. */
  name: string;
  /** Derived from the name (amplifierKey): renaming an amplifier gives it new zones and inputs. */
  key: string;
  driver: string;
  /** Serial device path or tcp://host:port; absent only for the simulated driver. */
  port: string | undefined;
  /** Driver options passed through to the family's factory (baudRate, pollIntervalMs, model, zones, ...). */
  options: Record<string, number | string>;
}

export interface MqttConfig {
  /** `mqtt://host:port` or `mqtts://host:port`; empty: no bridge. */
  url: string;
  username: string | undefined;
  /** From AZC_MQTT_PASSWORD or the file named by --mqtt-password-file, never from a flag (it would show in ps). */
  password: string | undefined;
  /** The daemon user the bridge acts as; without one the bridge does not start (README, Home Assistant). */
  account: string | undefined;
  /** Prefix of every state and command topic; empty: `azc/<first 8 hex digits of the device UDN>`. */
  baseTopic: string;
  discoveryPrefix: string;
  /** PEM files for mqtts:// (a private CA, and a client certificate and key when the broker asks for one). */
  caFile: string | undefined;
  certFile: string | undefined;
  keyFile: string | undefined;
  keepaliveS: number;
  connectTimeoutMs: number;
  /** Reconnect back-off: starts at the minimum, doubles per failed attempt, capped at the maximum. */
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function defaultConfig(cwd = process.cwd()): Config {
  const stateDir = path.resolve(cwd, 'data');
  return {
    host: '0.0.0.0',
    port: 8080,
    stateDir,
    exportDir: '',
    driver: 'simulated',
    serialPort: undefined,
    pollIntervalMs: 5000,
    amplifiers: [],
    ssdp: false,
    allowedHosts: [],
    ssdpInterfaces: [],
    friendlyName: 'Audio Zone Controller',
    logLevel: 'info',
    maxBodyBytes: 64 * 1024,
    sessionIdleMs: 12 * 3600_000,
    sessionAbsoluteMs: 7 * 24 * 3600_000,
    loginFreeFailures: 5,
    loginBaseDelayMs: 1000,
    loginMaxDelayMs: 15 * 60_000,
    sse: {
      retryMs: 2000,
      pingIntervalMs: 15_000,
      maxBufferedBytes: 1024 * 1024,
      replayEvents: 4096,
      recheckIntervalMs: 500,
    },
    limits: {
      streamsPerUser: 16,
      streamsTotal: 512,
      playlists: 500,
      tracksPerPlaylist: 5000,
      exportFiles: 500,
      exportBytes: 64 * 1024 * 1024,
      playlistPageDefault: 50,
      playlistPageMax: 200,
      scenes: 100,
      restoreBytes: 32 * 1024 * 1024,
    },
    mqtt: {
      url: '',
      username: undefined,
      password: undefined,
      account: undefined,
      baseTopic: '',
      discoveryPrefix: 'homeassistant',
      caFile: undefined,
      certFile: undefined,
      keyFile: undefined,
      keepaliveS: 30,
      connectTimeoutMs: 10_000,
      reconnectMinMs: 1000,
      reconnectMaxMs: 60_000,
    },
  };
}

export class ConfigError extends Error {}

type Raw = Record<string, unknown>;

/** MQTT settings as flat raw keys (`mqtt.url` is `mqttUrl`), so flags, environment and file share one path. */
const MQTT_KEYS = {
  url: 'mqttUrl',
  username: 'mqttUsername',
  passwordFile: 'mqttPasswordFile',
  account: 'mqttAccount',
  baseTopic: 'mqttBaseTopic',
  discoveryPrefix: 'mqttDiscoveryPrefix',
  caFile: 'mqttCaFile',
  certFile: 'mqttCertFile',
  keyFile: 'mqttKeyFile',
  keepaliveS: 'mqttKeepaliveS',
  connectTimeoutMs: 'mqttConnectTimeoutMs',
  reconnectMinMs: 'mqttReconnectMinMs',
  reconnectMaxMs: 'mqttReconnectMaxMs',
} as const;

const FLAG_KEYS: Record<string, keyof Config | (typeof MQTT_KEYS)[keyof typeof MQTT_KEYS]> = {
  '--host': 'host',
  '--port': 'port',
  '--state-dir': 'stateDir',
  '--export-dir': 'exportDir',
  '--driver': 'driver',
  '--serial-port': 'serialPort',
  '--poll-interval-ms': 'pollIntervalMs',
  '--log-level': 'logLevel',
  '--friendly-name': 'friendlyName',
  '--ssdp-interfaces': 'ssdpInterfaces',
  '--allowed-host': 'allowedHosts',
  '--mqtt-url': 'mqttUrl',
  '--mqtt-username': 'mqttUsername',
  '--mqtt-password-file': 'mqttPasswordFile',
  '--mqtt-account': 'mqttAccount',
  '--mqtt-base-topic': 'mqttBaseTopic',
  '--mqtt-discovery-prefix': 'mqttDiscoveryPrefix',
  '--mqtt-ca': 'mqttCaFile',
  '--mqtt-cert': 'mqttCertFile',
  '--mqtt-key': 'mqttKeyFile',
};

const ENV_KEYS: Record<string, keyof Config | (typeof MQTT_KEYS)[keyof typeof MQTT_KEYS] | 'mqttPassword'> = {
  AZC_HOST: 'host',
  AZC_PORT: 'port',
  AZC_STATE_DIR: 'stateDir',
  AZC_EXPORT_DIR: 'exportDir',
  AZC_DRIVER: 'driver',
  AZC_SERIAL_PORT: 'serialPort',
  AZC_POLL_INTERVAL_MS: 'pollIntervalMs',
  AZC_LOG_LEVEL: 'logLevel',
  AZC_FRIENDLY_NAME: 'friendlyName',
  AZC_SSDP: 'ssdp',
  AZC_SSDP_INTERFACES: 'ssdpInterfaces',
  AZC_ALLOWED_HOSTS: 'allowedHosts',
  AZC_MQTT_URL: 'mqttUrl',
  AZC_MQTT_USERNAME: 'mqttUsername',
  AZC_MQTT_PASSWORD: 'mqttPassword',
  AZC_MQTT_PASSWORD_FILE: 'mqttPasswordFile',
  AZC_MQTT_ACCOUNT: 'mqttAccount',
  AZC_MQTT_BASE_TOPIC: 'mqttBaseTopic',
  AZC_MQTT_DISCOVERY_PREFIX: 'mqttDiscoveryPrefix',
  AZC_MQTT_CA: 'mqttCaFile',
  AZC_MQTT_CERT: 'mqttCertFile',
  AZC_MQTT_KEY: 'mqttKeyFile',
};

export const USAGE = `usage: azcd [options]
  --config FILE          JSON configuration file (also AZC_CONFIG)
  --host ADDR            listen address (default 0.0.0.0)
  --port N               listen port (default 8080; 0 picks a free one)
  --state-dir DIR        database, device key and exports (default ./data)
  --export-dir DIR       playlist export directory (default <state-dir>/exports)
  --driver NAME          amplifier driver: simulated (default), monoprice, rnet or xantech
  --serial-port PATH     serial device of a real amplifier (prefer /dev/serial/by-id/...) or tcp://host:port
  --poll-interval-ms N   amplifier poll interval (default 5000)
  --ssdp / --no-ssdp     announce on the LAN with SSDP and mDNS (default off)
  --ssdp-interfaces LIST comma-separated interfaces for SSDP (default: all)
  --allowed-host NAME    a host name the API answers under besides IP addresses, localhost and azc-….local
                         (a reverse proxy's); repeat it or give a comma-separated list
  --friendly-name NAME   name shown by discovery
  --log-level LEVEL      fatal|error|warn|info|debug|trace|silent (default info)
  --mqtt-url URL         MQTT broker for the Home Assistant bridge, mqtt://host:1883 or mqtts://host:8883 (default off)
  --mqtt-username NAME   broker username (the password comes from AZC_MQTT_PASSWORD or --mqtt-password-file)
  --mqtt-password-file F file holding the broker password
  --mqtt-account USER    the azcd user the bridge acts as (required for the bridge; give it an Operator)
  --mqtt-base-topic T    state and command topics (default azc/<device id>)
  --mqtt-discovery-prefix P  Home Assistant discovery prefix (default homeassistant)
  --mqtt-ca/--mqtt-cert/--mqtt-key FILE  PEM files for mqtts://
  --help                 this text`;

/** Parses flags into raw values; throws ConfigError on anything unknown. */
function parseFlags(argv: string[]): { raw: Raw; configFile?: string; help: boolean } {
  const raw: Raw = {};
  let configFile: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new ConfigError(`${name} needs a value`);
      return next;
    };
    if (name === '--help' || name === '-h') help = true;
    else if (name === '--ssdp') raw.ssdp = true;
    else if (name === '--no-ssdp') raw.ssdp = false;
    else if (name === '--config') configFile = value();
    else if (name === '--mqtt-password') {
      throw new ConfigError('--mqtt-password would show in the process list; set AZC_MQTT_PASSWORD or use --mqtt-password-file FILE');
    }
    else if (name === '--allowed-host') raw.allowedHosts = [...((raw.allowedHosts as string[] | undefined) ?? []), ...toList(name, value())];
    else if (FLAG_KEYS[name]) raw[FLAG_KEYS[name]] = value();
    else throw new ConfigError(`unknown option ${name} (see --help)`);
  }
  return { raw, configFile, help };
}

function fromEnv(env: NodeJS.ProcessEnv): Raw {
  const raw: Raw = {};
  for (const [variable, key] of Object.entries(ENV_KEYS)) {
    const value = env[variable];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  return raw;
}

function readConfigFile(file: string): Raw {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Raw;
  } catch (err) {
    throw new ConfigError(`config file ${file} is not a JSON object: ${(err as Error).message}`);
  }
}

function toInt(key: string, value: unknown, min: number, max: number): number {
  // Strings must be plain decimal digits: Number() would also take "0x1F90", "8e3" or " 80".
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`"${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

function toBool(key: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1' || value === 'yes' || value === 'on') return true;
  if (value === 'false' || value === '0' || value === 'no' || value === 'off') return false;
  throw new ConfigError(`"${key}" must be true or false, got ${JSON.stringify(value)}`);
}

function toString(key: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new ConfigError(`"${key}" must be a non-empty string`);
  return value;
}

function toList(key: string, value: unknown, what = 'interface names'): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  if (typeof value === 'string') return value.split(',').map((s) => s.trim()).filter(Boolean);
  throw new ConfigError(`"${key}" must be a list of ${what}`);
}

/** `allowedHosts`: DNS names (letters, digits, dots, dashes; no port, no scheme), kept in lower case. */
function toHostNames(key: string, value: unknown): string[] {
  return toList(key, value, 'host names').map((name) => {
    const host = name.toLowerCase().replace(/\.$/, '');
    if (host.length > 253 || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) {
      throw new ConfigError(`"${key}" must list host names such as audio.example.lan (no scheme, port or path), got ${JSON.stringify(name).slice(0, 80)}`);
    }
    return host;
  });
}

/** The config file's `"limits": {...}`: each key optional, each a positive integer up to 2^31. */
function toLimits(current: Config['limits'], value: unknown): Config['limits'] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError('"limits" must be an object');
  const limits = { ...current };
  for (const [key, raw] of Object.entries(value)) {
    if (!(key in limits)) throw new ConfigError(`"limits.${key}" is not a limit; known: ${Object.keys(limits).join(', ')}`);
    limits[key as keyof Config['limits']] = toInt(`limits.${key}`, raw, 1, 2 ** 31);
  }
  return limits;
}

/** The config file's `"mqtt": {...}` as flat raw keys; a password is refused there (use passwordFile). */
function mqttSection(value: unknown): Raw {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError('"mqtt" must be an object');
  const raw: Raw = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === 'password') throw new ConfigError('"mqtt.password" is not read from the config file; use "mqtt.passwordFile" or AZC_MQTT_PASSWORD');
    const flat = MQTT_KEYS[key as keyof typeof MQTT_KEYS];
    if (!flat) throw new ConfigError(`"mqtt.${key}" is not an MQTT setting; known: ${Object.keys(MQTT_KEYS).join(', ')}`);
    raw[flat] = v;
  }
  return raw;
}

/** What is wrong with a broker URL (the config and the dashboard's bridge settings check it alike), or undefined. */
export function mqttUrlProblem(url: string): string | undefined {
  // Checked first: a URL with a login in it is never echoed back.
  if (url.includes('@')) return 'must not carry credentials (they would show in the process list and logs): give the broker login as its username and password';
  if (!/^mqtts?:\/\/[^/\s\u0000-\u001f\u007f]+(\/)?$/.test(url)) return `must look like mqtt://host:1883 or mqtts://host:8883, got ${JSON.stringify(url).slice(0, 120)}`;
  return undefined;
}

/** A topic prefix: levels without wildcards, no leading or trailing slash. */
function toTopicPrefix(key: string, value: unknown): string {
  const topic = toString(key, value);
  if (topic.length > 128 || /[+#\u0000]/.test(topic) || topic.startsWith('/') || topic.endsWith('/') || topic.includes('//')) {
    throw new ConfigError(`"${key}" must be topic levels like azc/living-room (no +, #, empty levels or leading/trailing /), got ${JSON.stringify(topic).slice(0, 140)}`);
  }
  return topic;
}

function readSecretFile(key: string, file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read "${key}" ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  // A trailing newline from `echo secret > file` is not part of the password.
  const secret = text.replace(/\r?\n$/, '');
  if (!secret) throw new ConfigError(`"${key}" ${file} is empty`);
  return secret;
}

/** Applies one layer of raw values onto a config, validating each. */
function apply(config: Config, raw: Raw, baseDir: string): void {
  for (const [key, value] of Object.entries(raw)) {
    switch (key) {
      case 'host':
        config[key] = toString(key, value);
        break;
      case 'friendlyName': {
        // Announced over SSDP, mDNS and MQTT as it is.
        const name = toString(key, value);
        const problem = nameProblem(name);
        if (problem) throw new ConfigError(`"friendlyName" ${problem}`);
        config.friendlyName = name;
        break;
      }
      case 'driver': {
        const driver = toString(key, value);
        if (!(DRIVER_NAMES as readonly string[]).includes(driver)) {
          throw new ConfigError(`"driver" must be one of ${DRIVER_NAMES.join(', ')}, got ${JSON.stringify(driver)}`);
        }
        config.driver = driver;
        break;
      }
      case 'serialPort': {
        const serialPort = toString(key, value);
        try {
          parseTcpPort(serialPort); // a tcp:// typo would otherwise only show as endless reconnect attempts
        } catch (err) {
          throw new ConfigError(`"serialPort": ${(err as Error).message}`);
        }
        config.serialPort = serialPort;
        break;
      }
      case 'stateDir':
      case 'exportDir':
        config[key] = path.resolve(baseDir, toString(key, value));
        break;
      case 'port':
        config.port = toInt(key, value, 0, 65535);
        break;
      case 'pollIntervalMs':
        config.pollIntervalMs = toInt(key, value, 200, 600_000);
        break;
      case 'ssdp':
        config.ssdp = toBool(key, value);
        break;
      case 'ssdpInterfaces':
        config.ssdpInterfaces = toList(key, value);
        break;
      case 'allowedHosts':
        config.allowedHosts = toHostNames(key, value);
        break;
      case 'limits':
        config.limits = toLimits(config.limits, value);
        break;
      case 'amplifiers':
        config.amplifiers = toAmplifiers(value);
        break;
      case 'mqtt':
        apply(config, mqttSection(value), baseDir);
        break;
      case 'mqttUrl': {
        const url = toString('mqtt.url', value);
        const problem = mqttUrlProblem(url);
        if (problem) throw new ConfigError(`"mqtt.url" ${problem}`);
        config.mqtt.url = url;
        break;
      }
      case 'mqttUsername':
        config.mqtt.username = toString('mqtt.username', value);
        break;
      case 'mqttPassword':
        config.mqtt.password = toString('AZC_MQTT_PASSWORD', value);
        break;
      case 'mqttPasswordFile':
        config.mqtt.password = readSecretFile('mqtt.passwordFile', path.resolve(baseDir, toString('mqtt.passwordFile', value)));
        break;
      case 'mqttAccount':
        config.mqtt.account = toString('mqtt.account', value);
        break;
      case 'mqttBaseTopic':
      case 'mqttDiscoveryPrefix': {
        const field = key === 'mqttBaseTopic' ? 'baseTopic' : 'discoveryPrefix';
        config.mqtt[field] = toTopicPrefix(`mqtt.${field}`, value);
        break;
      }
      case 'mqttCaFile':
      case 'mqttCertFile':
      case 'mqttKeyFile': {
        const field = key === 'mqttCaFile' ? 'caFile' : key === 'mqttCertFile' ? 'certFile' : 'keyFile';
        config.mqtt[field] = path.resolve(baseDir, toString(`mqtt.${field}`, value));
        break;
      }
      case 'mqttKeepaliveS':
        config.mqtt.keepaliveS = toInt('mqtt.keepaliveS', value, 5, 3600);
        break;
      case 'mqttConnectTimeoutMs':
        config.mqtt.connectTimeoutMs = toInt('mqtt.connectTimeoutMs', value, 100, 600_000);
        break;
      case 'mqttReconnectMinMs':
        config.mqtt.reconnectMinMs = toInt('mqtt.reconnectMinMs', value, 50, 600_000);
        break;
      case 'mqttReconnectMaxMs':
        config.mqtt.reconnectMaxMs = toInt('mqtt.reconnectMaxMs', value, 50, 3_600_000);
        break;
      case 'logLevel': {
        const level = toString(key, value);
        if (!(LOG_LEVELS as readonly string[]).includes(level)) {
          throw new ConfigError(`"logLevel" must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
        }
        config.logLevel = level as Config['logLevel'];
        break;
      }
      default:
        // Unknown keys in a config file are tolerated so newer files work with older daemons.
        break;
    }
  }
}

export interface LoadedConfig {
  config: Config;
  help: boolean;
}

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const flags = parseFlags(argv);
  const config = defaultConfig(cwd);
  const configFile = flags.configFile ?? env.AZC_CONFIG;
  const fileRaw = configFile ? readConfigFile(path.resolve(cwd, configFile)) : {};
  const envRaw = fromEnv(env);
  if (configFile) apply(config, fileRaw, path.dirname(path.resolve(cwd, configFile)));
  apply(config, envRaw, cwd);
  apply(config, flags.raw, cwd);
  if (!config.exportDir) config.exportDir = path.join(config.stateDir, 'exports');
  if (config.amplifiers.length > 0) {
    // Two descriptions of the hardware would leave one silently ignored: refuse, whichever layer set the single one.
    const single = [fileRaw, envRaw, flags.raw].some((raw) => 'driver' in raw || 'serialPort' in raw);
    if (single) {
      throw new ConfigError(
        'the config file lists "amplifiers" and a single amplifier is also given (--driver/--serial-port, AZC_DRIVER/AZC_SERIAL_PORT or "driver"/"serialPort"): ' +
          'describe every amplifier in "amplifiers" and drop the single one',
      );
    }
    return { config, help: flags.help };
  }
  if (config.driver !== 'simulated' && !config.serialPort) {
    throw new ConfigError(`the ${config.driver} driver needs --serial-port (or AZC_SERIAL_PORT), e.g. /dev/serial/by-id/usb-... or tcp://host:port`);
  }
  return { config, help: flags.help };
}


/** Most amplifiers one daemon drives: each holds a port and a poll loop, and the API lists all their zones. */
export const MAX_AMPLIFIERS = 8;
const AMPLIFIER_NAME_MAX = 64;

/** Driver options an amplifier entry may carry, with their ranges; anything else is refused as a likely typo. */
const AMPLIFIER_INT_OPTIONS: Record<string, [number, number]> = {
  baudRate: [1200, 115_200],
  pollIntervalMs: [200, 600_000],
  commandTimeoutMs: [50, 60_000],
  interCommandGapMs: [0, 5000],
  reconnectMinMs: [50, 600_000],
  reconnectMaxMs: [50, 3_600_000],
  offlineAfterTimeouts: [1, 100],
  activityPollIntervalMs: [200, 3_600_000],
};
const AMPLIFIER_CHOICE_OPTIONS: Record<string, readonly (string | number)[]> = {
  model: Object.keys(XANTECH_MODELS),
  zones: [8, 16],
  activityUpdates: ['auto', 'off'],
};

/**
 * The store key of an amplifier named `name`: lower-case ASCII letters and digits joined by dashes ("Main floor" is
 * `main-floor`), so it is stable across restarts and reordering and safe in MQTT topics. A name with no such
 * characters gets a short hash of itself. The single amplifier of --driver is named after its driver, so its key is
 * the driver name, the one zones and inputs made before amplifier lists carry.
 */
export function amplifierKey(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents split off by NFKD: "Küche" is `kuche`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug) return slug;
  return `amp-${createHash('sha256').update(name.toLowerCase()).digest('hex').slice(0, 8)}`;
}

/** The amplifiers the daemon runs: the listed ones, or the single one of `driver` and `serialPort`. */
export function amplifiersOf(config: Config): AmplifierConfig[] {
  if (config.amplifiers.length > 0) return config.amplifiers;
  return [
    {
      name: config.driver,
      key: amplifierKey(config.driver),
      driver: config.driver,
      port: config.serialPort,
      options: { pollIntervalMs: config.pollIntervalMs },
    },
  ];
}

/** The config file's `"amplifiers": [{name, driver, port, ...options}, ...]`. */
function toAmplifiers(value: unknown): AmplifierConfig[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_AMPLIFIERS) {
    throw new ConfigError(`"amplifiers" must be a list of 1 to ${MAX_AMPLIFIERS} amplifiers like {"name": "Main floor", "driver": "rnet", "port": "tcp://10.0.0.5:4999"}`);
  }
  const seen = new Map<string, string>();
  return value.map((entry: unknown, i) => {
    const at = `amplifiers[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new ConfigError(`"${at}" must be an object like {"name": "Main floor", "driver": "rnet", "port": "tcp://10.0.0.5:4999"}`);
    }
    const { name: rawName, driver: rawDriver, port: rawPort, ...rest } = entry as Raw;
    if (typeof rawName !== 'string' || rawName.trim() === '' || rawName.length > AMPLIFIER_NAME_MAX || nameProblem(rawName) !== undefined) {
      throw new ConfigError(`"${at}.name" must be a name of 1 to ${AMPLIFIER_NAME_MAX} printable characters, got ${JSON.stringify(rawName)?.slice(0, 80)}`);
    }
    const name = rawName.trim();
    const key = amplifierKey(name);
    const clash = seen.get(key);
    if (clash !== undefined) {
      throw new ConfigError(
        `"${at}.name" ${JSON.stringify(name)} is too close to ${JSON.stringify(clash)}: amplifier names must differ in more than case, spaces or punctuation`,
      );
    }
    seen.set(key, name);
    const driver = toString(`${at}.driver`, rawDriver);
    if (!(DRIVER_NAMES as readonly string[]).includes(driver)) {
      throw new ConfigError(`"${at}.driver" must be one of ${DRIVER_NAMES.join(', ')}, got ${JSON.stringify(driver)}`);
    }
    let port: string | undefined;
    if (rawPort !== undefined) {
      port = toString(`${at}.port`, rawPort);
      try {
        parseTcpPort(port);
      } catch (err) {
        throw new ConfigError(`"${at}.port": ${(err as Error).message}`);
      }
    } else if (driver !== 'simulated') {
      throw new ConfigError(`"${at}.port" is required for the ${driver} driver of ${JSON.stringify(name)}: a serial device like /dev/serial/by-id/usb-... or tcp://host:port`);
    }
    const options: Record<string, number | string> = {};
    for (const [option, raw] of Object.entries(rest)) {
      const range = AMPLIFIER_INT_OPTIONS[option];
      const choices = AMPLIFIER_CHOICE_OPTIONS[option];
      if (range) options[option] = toInt(`${at}.${option}`, raw, range[0], range[1]);
      else if (choices) {
        if (!choices.includes(raw as string | number)) {
          throw new ConfigError(`"${at}.${option}" must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${JSON.stringify(raw)}`);
        }
        options[option] = raw as string | number;
      } else {
        const known = ['name', 'driver', 'port', ...Object.keys(AMPLIFIER_INT_OPTIONS), ...Object.keys(AMPLIFIER_CHOICE_OPTIONS)];
        throw new ConfigError(`"${at}.${option}" is not an amplifier setting; known: ${known.join(', ')}`);
      }
    }
    return { name, key, driver, port, options };
  });
}
