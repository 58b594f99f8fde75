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

const SETTINGS_KEY = 'mqtt:settings';
/** One broker however its URL is written: mqtt://Host:1883/ and mqtt://host:1883 are the same one. */
const retainedKey = (broker: string) => `mqtt:retained:${broker.replace(/\/$/, '').toLowerCase()}`;

export class BridgeRepo {
  constructor(private readonly meta: MetaRepo) {}

  settings(): SavedBridgeSettings {
    const parsed = parse(this.meta.setting(SETTINGS_KEY));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    const row = parsed as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const sealed = row.password as { nonce?: unknown; box?: unknown } | undefined;
    const password = sealed && typeof sealed.nonce === 'string' && typeof sealed.box === 'string' ? { nonce: sealed.nonce, box: sealed.box } : undefined;
    return dropUndefined({ url: text(row.url), username: text(row.username), account: text(row.account), password });
  }

  /** Replaces the saved settings (an empty object removes the row). */
  setSettings(settings: SavedBridgeSettings): void {
    const kept = dropUndefined(settings);
    this.meta.setSetting(SETTINGS_KEY, Object.keys(kept).length ? JSON.stringify(kept) : null);
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
