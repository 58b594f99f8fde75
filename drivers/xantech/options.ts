// Options of the Xantech driver and their defaults, with the reason for each.
import type { SerialOptions, SerialTimings } from '../core/serial-options.js';
import type { XantechModel, ZoneCount } from './protocol.js';

export interface XantechOptions extends SerialOptions {
  /** Picks the default baud rate (an explicit baudRate wins). Default 'mrc88'. */
  model?: XantechModel;
  /** 8, or 16 for two amplifiers linked in expanded mode. Default 8. */
  zones?: ZoneCount;
  /**
   * 'auto': ask for zone-activity reports (`!ZA1+`) and poll only as a safety net, falling back to polling when the
   * amp refuses. 'off': switch them off (`!ZA0+`; the setting survives power cycles) and poll, for firmware that
   * misbehaves with them on.
   */
  activityUpdates?: 'auto' | 'off';
  /** Poll interval while zone-activity reports are on: a safety net for a lost report, and the liveness check. */
  activityPollIntervalMs?: number;
}

/** Defaults and their reasons live here, not spread through the code. */
export const XANTECH_DEFAULTS: SerialTimings & { model: XantechModel; zones: ZoneCount; activityPollIntervalMs: number } = {
  model: 'mrc88',
  zones: 8,
  baudRate: 9600, // the MRC88's; the model's own wins unless a baud rate is given (drivers/xantech/protocol.ts)
  pollIntervalMs: 5000, // without activity reports: a keypad change shows within ~5 s (8 queries, ~0.5 s at 9600 baud)
  activityPollIntervalMs: 60_000, // with them: reports carry the news, the poll only catches what got lost
  commandTimeoutMs: 1000, // a zone report is ~45 bytes, ~50 ms at 9600 baud
  interCommandGapMs: 30,
  reconnectMinMs: 250,
  reconnectMaxMs: 10_000,
  offlineAfterTimeouts: 3,
};
