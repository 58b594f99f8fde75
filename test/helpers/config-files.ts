// Configuration tests: a config file in a private temp dir, and the ConfigError a load throws (if any).
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../daemon/config.js';
import { tempDir } from './daemon.js';

/** Writes `content` (JSON-encoded unless a string) to a config file removed with the test; returns its path. */
export function configFile(t: { teardown(fn: () => unknown): void }, content: unknown): string {
  const dir = tempDir('azc-config-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'azcd.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The ConfigError `fn` throws, or undefined when it throws none; any other error is rethrown. */
export function configError(fn: () => unknown): ConfigError | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  return undefined;
}

/** The message of the ConfigError `fn` throws, or "no error". */
export const errorOf = (fn: () => unknown): string => configError(fn)?.message ?? 'no error';
