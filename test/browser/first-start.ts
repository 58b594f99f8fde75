// A daemon started the way a fresh appliance starts: no admin password given, so `admin` gets a generated one.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Daemon } from '../../daemon/app.js';
import { type Config, defaultConfig } from '../../daemon/config.js';
import { createLogger } from '../../daemon/log.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { tempDir } from '../helpers/daemon.js';
import { TEST_PASSWORDS } from '../helpers/passwords.js';

export interface FirstStart {
  base: string;
  /** The generated password and key, read from `<stateDir>/initial-admin.txt` as an owner would. */
  password: string;
  adminKey: string;
  /** Its state folder, where `initial-admin.txt` is. */
  stateDir: string;
}

/** Starts the daemon without `adminPassword` and registers its teardown. */
export async function startWithGeneratedAdmin(t: { teardown(fn: () => unknown): void }): Promise<FirstStart> {
  const stateDir = tempDir('azc-first-start-');
  const config: Config = {
    ...defaultConfig(),
    host: '127.0.0.1',
    port: 0,
    stateDir,
    exportDir: path.join(stateDir, 'exports'),
    logLevel: 'warn',
  };
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const daemon = new Daemon({
    config,
    logger: createLogger(config.logLevel, quiet),
    driver: new SimulatedDriver({ applyDelayMs: 1 }),
    passwordHasher: TEST_PASSWORDS,
  });
  t.teardown(async () => {
    await daemon.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const { port } = await daemon.start();
  const file = readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8');
  const field = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(file)?.[1] ?? '';
  return { base: `http://127.0.0.1:${port}`, password: field('password'), adminKey: field('apiKey'), stateDir };
}
