// The `meta` table: the device's identity (its UPnP UDN) and the amplifier channels whose zone or input an admin
// deleted, so the next start does not recreate them from the amplifier's description.
import type { Db } from './db.js';

export type DeletedKind = 'zone' | 'input';

const UDN_KEY = 'udn';
/** Rows written by older versions say '' for "recreated since"; only this value means deleted. */
const DELETED = 'deleted';

const deletedKey = (kind: DeletedKind, driver: string, channel: number): string => `deleted:${kind}:${driver}:${channel}`;

export class MetaRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      get: db.prepare('SELECT value FROM meta WHERE key = ?'),
      set: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
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

  /** True when an admin deleted the zone or input on this channel and nobody created one there since. */
  isDeleted(kind: DeletedKind, driver: string, channel: number): boolean {
    return this.get(deletedKey(kind, driver, channel)) === DELETED;
  }
  markDeleted(kind: DeletedKind, driver: string, channel: number): void {
    this.s.set.run(deletedKey(kind, driver, channel), DELETED);
  }
  /** Called when an admin creates a zone or input on the channel again. */
  clearDeleted(kind: DeletedKind, driver: string, channel: number): void {
    this.s.remove.run(deletedKey(kind, driver, channel));
  }

  private get(key: string): string | undefined {
    return (this.s.get.get(key) as { value: string } | undefined)?.value;
  }
}
