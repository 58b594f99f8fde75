// What the MQTT bridge needs from configuration, resolved once: broker connection, topic roots, identity.
import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import type { MqttConfig } from '../config.js';

/** Command payloads longer than this are not parsed at all (a volume, ON/OFF or a player name is far shorter). */
export const MAX_COMMAND_BYTES = 256;
/** Malformed-command warnings logged per window before the rest are only counted (a storm must not flood the log). */
export const WARN_BUDGET = 20;
export const WARN_WINDOW_MS = 10_000;

export interface BridgeIdentity {
  /** The UPnP UDN (`uuid:...`): the appliance's stable identity. */
  udn: string;
  friendlyName: string;
  version: string;
  /** The dashboard as a hub can open it (`configuration_url`). */
  dashboardUrl: string;
}

export interface ResolvedBridgeOptions {
  url: string;
  account: string;
  baseTopic: string;
  discoveryPrefix: string;
  /** `azc_<32 hex>`: discovery node id and the prefix of every unique_id, stable for the appliance's life. */
  nodeId: string;
  identity: BridgeIdentity;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  client: IClientOptions;
  tls: { caFile?: string; certFile?: string; keyFile?: string };
}

/** Reads the PEM files for mqtts:// (at bridge start, so a missing file stops the bridge, not the daemon). */
export function tlsFiles(tls: ResolvedBridgeOptions['tls']): Pick<IClientOptions, 'ca' | 'cert' | 'key'> {
  const read = (file: string | undefined) => (file ? readFileSync(file) : undefined);
  return { ca: read(tls.caFile), cert: read(tls.certFile), key: read(tls.keyFile) };
}

/** Hex digits of the UDN without dashes: unique per appliance and valid in topics and HA ids. */
export function udnHex(udn: string): string {
  return udn
    .replace(/^uuid:/, '')
    .replace(/[^0-9a-fA-F]/g, '')
    .toLowerCase();
}

/** The default base topic: short enough to type, stable per appliance. */
export function defaultBaseTopic(udn: string): string {
  return `azc/${udnHex(udn).slice(0, 8)}`;
}

/**
 * The dashboard URL for Home Assistant's "visit device" link: the address the API listens on, or on a wildcard
 * listener `machineName`, a name the Host allow-list accepts (the mDNS name the appliance announces, or the machine's
 * host name when discovery is off).
 */
export function dashboardUrl(host: string, port: number, machineName: string): string {
  const name = host === '0.0.0.0' || host === '::' ? machineName : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}/`;
}

export function resolveBridgeOptions(config: MqttConfig, identity: BridgeIdentity): ResolvedBridgeOptions {
  const hex = udnHex(identity.udn);
  const baseTopic = config.baseTopic || defaultBaseTopic(identity.udn);
  const client: IClientOptions = {
    clientId: `azcd-${hex.slice(0, 12)}`,
    username: config.username,
    password: config.password,
    keepalive: config.keepaliveS,
    connectTimeout: config.connectTimeoutMs,
    reconnectPeriod: config.reconnectMinMs,
    // A clean session and no offline queue: a command sent while the bridge was away is not acted on later.
    clean: true,
    queueQoSZero: false,
    resubscribe: true,
    will: { topic: `${baseTopic}/status`, payload: Buffer.from('offline'), qos: 1, retain: true },
  };
  return {
    url: config.url,
    account: config.account ?? '',
    baseTopic,
    discoveryPrefix: config.discoveryPrefix,
    nodeId: `azc_${hex}`,
    identity,
    reconnectMinMs: config.reconnectMinMs,
    reconnectMaxMs: Math.max(config.reconnectMinMs, config.reconnectMaxMs),
    client,
    tls: { caFile: config.caFile, certFile: config.certFile, keyFile: config.keyFile },
  };
}
