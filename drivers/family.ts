// What a driver family registers in drivers/index.ts (its name, option schema and factory), and the check each
// factory makes of the options it is given.
import type { Static, TObject } from '@sinclair/typebox';
import type { AmplifierDriver, DriverOptions } from './driver.js';
import { checkSetting } from './settings.js';

export interface DriverFamily {
  /** As chosen in configuration (`--driver`, an amplifier's `"driver"`). */
  readonly name: string;
  /** The hardware it drives, in one line (help and docs). */
  readonly description: string;
  /**
   * The options an amplifier of this family takes, with their ranges, defaults and descriptions (an amplifier in
   * the config file's list writes `serialPort` as `"port"`).
   */
  readonly options: TObject;
  /** A driver, not started; throws naming the option when the options break the schema. */
  create(options: DriverOptions): Promise<AmplifierDriver>;
}

/** What the daemon or a test hands a driver besides settings: the byte port, the clock, the log. */
const HOOKS = new Set<keyof DriverOptions>(['openPort', 'clock', 'log']);

/**
 * The options, once their settings fit the family's schema; throws every problem otherwise, so a driver built by a
 * test with a bad option fails as the daemon's configuration would.
 */
export function checkedOptions<S extends TObject, O extends DriverOptions>(
  family: string,
  schema: S,
  options: O,
): O & Static<S> {
  const settings = Object.fromEntries(
    Object.entries(options).filter(([key]) => !HOOKS.has(key as keyof DriverOptions)),
  );
  const problems = checkSetting(schema, settings);
  if (problems.length > 0) {
    throw new Error(
      problems.map((problem) => `${family} driver option "${problem.path}": ${problem.message}`).join('\n'),
    );
  }
  return options as O & Static<S>;
}
