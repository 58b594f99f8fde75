// The MQTT bridge's rows in `meta`: the settings an admin saved in the dashboard (the broker password sealed with
// the device key) and, per broker, the retained topics the bridge left there. A restore keeps both (backup-rows.ts
// replaces only the identity and deleted-channel rows).
import type { MetaRepo } from './meta-repo.js';

/** The settings saved from the dashboard; a field left out was never set there (the start-up value applies). */
export interface SavedBridgeSettings {
  /** '' turns the bridge off. */
  url?: string;
  username?: string;
  /** Sealed with DeviceSecrets (base64 nonce and box); never stored or logged in clear. */
  password?: { nonce: string; box: string };
  account?: string;
}

/** The `meta` row of the settings (a backup carries it: backup-rows.ts). */
export const BRIDGE_SETTINGS_KEY = 'mqtt:settings';
/** One broker however its URL is written: mqtt://Host:1883/ and mqtt://host:1883 are the same one. */
const retainedKey = (broker: string) => `mqtt:retained:${broker.replace(/\/$/, '').toLowerCase()}`;

export class BridgeRepo {
  constructor(private readonly meta: MetaRepo) {}

  settings(): SavedBridgeSettings {
    return parseBridgeSettings(this.meta.setting(BRIDGE_SETTINGS_KEY));
  }

  /** Replaces the saved settings (an empty object removes the row). */
  setSettings(settings: SavedBridgeSettings): void {
    this.meta.setSetting(BRIDGE_SETTINGS_KEY, bridgeSettingsText(settings));
  }

  /** The topics the bridge left retained on this broker and has not cleared. */
  retained(broker: string): string[] {
    const parsed = parse(this.meta.setting(retainedKey(broker)));
    return Array.isArray(parsed) ? parsed.filter((topic): topic is string => typeof topic === 'string') : [];
  }

  setRetained(broker: string, topics: Iterable<string>): void {
    const list = [...topics].sort();
    this.meta.setSetting(retainedKey(broker), list.length ? JSON.stringify(list) : null);
  }
}

/** The settings a `meta` row holds; {} when it is missing or unreadable. */
export function parseBridgeSettings(text: string | undefined): SavedBridgeSettings {
  const parsed = parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const row = parsed as Record<string, unknown>;
  const string = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const sealed = row.password as { nonce?: unknown; box?: unknown } | undefined;
  const password =
    sealed && typeof sealed.nonce === 'string' && typeof sealed.box === 'string'
      ? { nonce: sealed.nonce, box: sealed.box }
      : undefined;
  return dropUndefined({
    url: string(row.url),
    username: string(row.username),
    account: string(row.account),
    password,
  });
}

/** The `meta` row's value for these settings; null (no row) when none is set. */
export function bridgeSettingsText(settings: SavedBridgeSettings): string | null {
  const kept = dropUndefined(settings);
  return Object.keys(kept).length ? JSON.stringify(kept) : null;
}

/** Where a broker URL connects to (scheme, host, port with its default), ignoring how it is written; '' for none. */
export function brokerOf(url: string | undefined): string {
  if (!url) return '';
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'mqtts:' ? '8883' : '1883');
    return `${parsed.protocol}//${parsed.hostname.toLowerCase()}:${port}`;
  } catch {
    return url;
  }
}

/** A row written by this module, or undefined when missing or unreadable (then nothing is assumed from it). */
function parse(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
