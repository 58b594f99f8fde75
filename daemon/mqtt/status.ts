// The bridge's state as health and the settings API report it: kept apart from bridge.ts, which loads the MQTT
// client, so the routes can describe it without loading that.

/**
 * misconfigured: the settings cannot work (no bridge account, an account that does not exist or is disabled, a
 * broker password without a username, an unreadable TLS file); `detail` says which and how to fix it. connecting:
 * first attempt; connected; reconnecting: the broker went away and the bridge is retrying with back-off; stopped:
 * the daemon is shutting down or the settings are being replaced.
 */
export const BRIDGE_STATES = ['misconfigured', 'connecting', 'connected', 'reconnecting', 'stopped'] as const;
export type BridgeState = (typeof BRIDGE_STATES)[number];

export interface BridgeStatus {
  state: BridgeState;
  /** Why the bridge is not connected or misconfigured, when it knows (never a secret). */
  detail?: string;
}

/** Whether a username names an enabled user, a disabled one or nobody. */
export type AccountState = 'enabled' | 'disabled' | 'missing';
