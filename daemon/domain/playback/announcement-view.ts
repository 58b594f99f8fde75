// An announcement as the API and the events show it, and the record the queue keeps of each one.
import type { AnnouncementStatus, AnnouncementView, Caller, StreamOutput } from '../shared/index.js';

/** A zone and why an announcement treated it as it did. */
export interface ZoneReason {
  zoneId: string;
  reason: string;
}

/** What was asked. */
export interface AnnouncementRequest {
  uri: string;
  zoneIds: string[];
  volume: number;
  /** The stream player to play it through (on its amplifier); chosen by the daemon when not given. */
  playerId?: string;
}

/** One announcement, from its request to its end. */
export interface Job {
  view: AnnouncementView;
  /** Who asked (queue caps count per user). */
  userId: string;
  requested: string | undefined;
  /** The caller as it is when the announcement's turn comes. */
  recheck: () => Caller;
  /** While it plays, one per player: each cuts it short there, with why it failed there (null: a cancel). */
  cuts: Map<string, (failure: string | null) => void>;
  /** The players it took, with the output each had then and its amplifier's name: one deleted or given another output meanwhile is lost. */
  taken: Map<string, { output: StreamOutput; amplifier: string }>;
  /** Players lost while it played, with why; a deleted one's zones were detached and muted by the deletion. */
  lost: Map<string, { why: string; deleted: boolean }>;
  cancelled: boolean;
}

export function newView(id: string, request: AnnouncementRequest, at: number): AnnouncementView {
  return {
    id,
    uri: request.uri,
    zoneIds: request.zoneIds,
    volume: request.volume,
    playerIds: [],
    status: 'queued',
    detail: null,
    skipped: [],
    kept: [],
    createdAt: new Date(at).toISOString(),
    startedAt: null,
    endedAt: null,
  };
}

/** Whether an announcement is over. */
export const ended = (status: AnnouncementStatus): boolean =>
  status === 'done' || status === 'failed' || status === 'cancelled';
