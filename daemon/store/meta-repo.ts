// The `meta` table: the device's identity (its UPnP UDN), how many times the daemon started, and the amplifier
// channels whose zone or input an admin deleted, so the next start does not recreate them from the amplifier's description.

import type { AmplifierRef } from './audio-repo.js';
import type { Db } from './db.js';

export type DeletedKind = 'zone' | 'input';

export const UDN_KEY = 'udn';
/** How many times the daemon has started on this database: the run part of event ids (domain/shared/events.ts). */
export const EVENT_RUN_KEY = 'eventRun';
/** Rows written by older versions say '' for "recreated since"; only this value means deleted. */
export const DELETED = 'deleted';

/**
 * The single amplifier of --driver (key = driver name) keeps the form written before amplifier lists, so what an
 * admin deleted then stays deleted; a listed amplifier adds its key.
 */
export const deletedKey = (kind: DeletedKind, ref: Amp, channel: number): string => {
  const amplifier = typeof ref === 'string' ? { key: ref, driver: ref } : ref;
  return amplifier.key === amplifier.driver
    ? `deleted:${kind}:${amplifier.driver}:${channel}`
    : `deleted:${kind}:${amplifier.driver}@${amplifier.key}:${channel}`;
};
/** An amplifier, or a bare driver name for the single amplifier of --driver. */
type Amp = AmplifierRef | string;

/** The channel a `meta` row marks deleted (the inverse of deletedKey); undefined for any other row. */
export function parseDeletedKey(
  key: string,
  value: string,
): { kind: DeletedKind; amplifier: AmplifierRef; channel: number } | undefined {
  const match = /^deleted:(zone|input):([^:@]+)(?:@([^:]+))?:(\d+)$/.exec(key);
  if (!match || value !== DELETED) return undefined;
  const driver = match[2]!;
  return { kind: match[1] as DeletedKind, amplifier: { key: match[3] ?? driver, driver }, channel: Number(match[4]) };
}

export class MetaRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      get: db.prepare('SELECT value FROM meta WHERE key = ?'),
      set: db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      remove: db.prepare('DELETE FROM meta WHERE key = ?'),
    };
  }

  /** The stable `uuid:…` the device announces over SSDP and in /description.xml, if one was made yet. */
  udn(): string | undefined {
    return this.get(UDN_KEY);
  }
  setUdn(udn: string): void {
    this.s.set.run(UDN_KEY, udn);
  }

  /** Counts one more start and returns its number (1 on a new database). Call inside a transaction. */
  nextEventRun(): number {
    const run = Number(this.get(EVENT_RUN_KEY) ?? 0) + 1;
    this.s.set.run(EVENT_RUN_KEY, String(run));
    return run;
  }

  /** True when an admin deleted the zone or input on this channel and nobody created one there since. */
  isDeleted(kind: DeletedKind, amplifier: Amp, channel: number): boolean {
    return this.get(deletedKey(kind, amplifier, channel)) === DELETED;
  }
  markDeleted(kind: DeletedKind, amplifier: Amp, channel: number): void {
    this.s.set.run(deletedKey(kind, amplifier, channel), DELETED);
  }
  /** Called when an admin creates a zone or input on the channel again. */
  clearDeleted(kind: DeletedKind, amplifier: Amp, channel: number): void {
    this.s.remove.run(deletedKey(kind, amplifier, channel));
  }

  /** A row another module keeps here under its own key prefix (bridge-repo.ts), or undefined. */
  setting(key: string): string | undefined {
    return this.get(key);
  }
  /** Stores (or with null removes) such a row. */
  setSetting(key: string, value: string | null): void {
    if (value === null) this.s.remove.run(key);
    else this.s.set.run(key, value);
  }

  private get(key: string): string | undefined {
    return (this.s.get.get(key) as { value: string } | undefined)?.value;
  }
}
