// Authentication and user administration on a fresh store of their own, with a clock, a bus and a first admin.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { defaultConfig } from '../../daemon/config.js';
import { Authentication } from '../../daemon/domain/accounts/authentication.js';
import { DeviceSecrets } from '../../daemon/domain/accounts/secrets.js';
import { UserAdmin } from '../../daemon/domain/accounts/user-admin.js';
import type { Caller, Role } from '../../daemon/domain/shared/access.js';
import { type BusEvent, EventBus } from '../../daemon/domain/shared/events.js';
import { Store } from '../../daemon/store/db.js';
import { UsersRepo } from '../../daemon/store/users-repo.js';
import { tempDir } from './daemon.js';
import './sqlite-guard.js';

export interface AccountsRig {
  store: Store;
  repo: UsersRepo;
  bus: EventBus;
  auth: Authentication;
  admin: UserAdmin;
  clock: { now: number };
  config: ReturnType<typeof defaultConfig>;
  /** Every event the bus delivered, internal ones included. */
  events: BusEvent[];
  /** The first admin's caller (API key). */
  root: Caller;
  /** Creates a user and returns its id, password, key and key caller. */
  user(username: string, role: Role): Promise<{ id: string; password: string; apiKey: string; caller: Caller }>;
  /** The caller an API key resolves to now; fails the test setup when it does not authenticate. */
  keyCaller(apiKey: string): Caller;
}

export async function accountsRig(t: { teardown(fn: () => unknown): void }): Promise<AccountsRig> {
  const dir = tempDir('azc-accounts-');
  const store = new Store(path.join(dir, 'azc.db'));
  t.teardown(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const repo = new UsersRepo(store.db);
  const secrets = new DeviceSecrets(randomBytes(32));
  const bus = new EventBus(64);
  const events: BusEvent[] = [];
  bus.subscribe('test', (event) => events.push(event), { internal: true });
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const config = defaultConfig();
  const auth = new Authentication(store, repo, secrets, bus, config, () => clock.now);
  // scrypt is not under test here (secrets.test.ts covers it); a plain stand-in keeps each call instant.
  auth.passwords = {
    hash: async (password) => `plain$${password}`,
    verify: async (password, stored) => stored === `plain$${password}`,
  };
  const admin = new UserAdmin(
    store,
    repo,
    secrets,
    bus,
    auth,
    () => true,
    () => clock.now,
  );
  const keyCaller = (apiKey: string): Caller => {
    const caller = auth.authenticate({ source: 'x-api-key', value: apiKey });
    if (!caller) throw new Error('the key does not authenticate');
    return caller;
  };
  const first = await admin.ensureInitialAdmin('first-admin-password', () => undefined);
  if (!first) throw new Error('the store was not empty');
  const root = keyCaller(first.apiKey);
  const user = async (username: string, role: Role) => {
    const password = `${username}-password`;
    const created = await admin.create(root, { username, password, role });
    return { id: created.id, password, apiKey: created.apiKey, caller: keyCaller(created.apiKey) };
  };
  return { store, repo, bus, auth, admin, clock, config, events, root, user, keyCaller };
}
