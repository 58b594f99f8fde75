// The amplifier settings: one amplifier from --driver and --serial-port, or the config file's list of amplifiers,
// each checked against its driver family's option schema (drivers/index.ts); and the store key of an amplifier.
import { createHash } from 'node:crypto';
import { type TObject, Type } from '@sinclair/typebox';
import {
  checkSetting,
  DRIVER_NAMES,
  type DriverFamily,
  driverFamily,
  type SettingProblem,
} from '../../drivers/index.js';
import { nameProblem } from '../names.js';
import './setting-options.js';

/** One amplifier the daemon drives; `key` identifies its zones and inputs in the store. */
export interface AmplifierConfig {
  /** Shown in the API (`output.amplifier`), health and Home Assistant; unique, case-insensitive. */
  name: string;
  /** Derived from the name (amplifierKey): renaming an amplifier gives it new zones and inputs. */
  key: string;
  driver: string;
  /** Serial device path or tcp://host:port; absent for a family without a port (simulated). */
  port: string | undefined;
  /** The family's options besides the port, as its schema took them (baudRate, pollIntervalMs, model, zones, ...). */
  options: Record<string, number | string>;
}

/** Most amplifiers one daemon drives: each holds a port and a poll loop, and the API lists all their zones. */
export const MAX_AMPLIFIERS = 8;

const driverChoice = (description: string, fallback?: string) =>
  Type.Union(
    DRIVER_NAMES.map((name) => Type.Literal(name)),
    { default: fallback, description },
  );

const NAME = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'the name shown in the API and Home Assistant, unique (case, spaces and punctuation aside)',
  check: (name: string) => (name.trim() === '' ? 'must not be blank' : nameProblem(name)),
});

export const AMPLIFIER = Type.Object({
  driver: driverChoice('driver family of the single amplifier', 'simulated'),
  serialPort: Type.Optional(
    Type.String({
      minLength: 1,
      valueName: 'PATH',
      description: "the single amplifier's serial device (best a /dev/serial/by-id/... path) or tcp://host:port",
    }),
  ),
  pollIntervalMs: Type.Optional(
    Type.Integer({
      defaultText: "the driver's",
      description: "how often the single amplifier's zones are read, in ms",
    }),
  ),
  amplifiers: Type.Array(Type.Unknown(), {
    minItems: 1,
    maxItems: MAX_AMPLIFIERS,
    default: [],
    flag: false,
    env: false,
    defaultText: 'none: the single amplifier of driver and serialPort',
    description: 'several amplifiers, each {"name", "driver", "port", ...the driver\'s options} (below)',
  }),
});

const ENTRY_DRIVER = driverChoice("the amplifier's driver family");

/** The schema of one list entry of `family`: name and driver, its options, and its serial port as `port`. */
export function entrySchema(family: DriverFamily): TObject {
  const { serialPort, ...options } = family.options.properties;
  return Type.Object({
    name: NAME,
    driver: ENTRY_DRIVER,
    ...(serialPort ? { port: { ...serialPort, alsoCalled: ['serialPort'] } } : {}),
    ...options,
  });
}

/** The config file's list, checked entry by entry; problems have paths like `amplifiers[1].port`. */
export function toAmplifiers(entries: unknown[]): { amplifiers: AmplifierConfig[]; problems: SettingProblem[] } {
  const problems: SettingProblem[] = [];
  const seen = new Map<string, string>();
  const amplifiers = entries.map((entry, i): AmplifierConfig | undefined => {
    const path = `amplifiers[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push({
        path,
        message: `must be an object like {"name": "Main floor", "driver": "rnet", "port": "tcp://10.0.0.5:4999"}, got ${JSON.stringify(entry)?.slice(0, 60)}`,
      });
      return undefined;
    }
    const found = entryProblems(entry as Record<string, unknown>, path);
    problems.push(...found);
    if (found.length > 0) return undefined;
    const { name, driver, port, ...options } = entry as {
      name: string;
      driver: string;
      port?: string;
    } & AmplifierConfig['options'];
    const key = amplifierKey(name.trim());
    const clash = seen.get(key);
    if (clash !== undefined) {
      const message = `${JSON.stringify(name.trim())} is too close to ${JSON.stringify(clash)}: amplifier names must differ in more than case, spaces or punctuation`;
      problems.push({ path: `${path}.name`, message });
    }
    seen.set(key, name.trim());
    return { name: name.trim(), key, driver, port, options };
  });
  return { amplifiers: amplifiers.filter((amplifier) => amplifier !== undefined), problems };
}

/** One entry against its family's entry schema (name and driver alone when the family is unknown). */
function entryProblems(entry: Record<string, unknown>, path: string): SettingProblem[] {
  const family = typeof entry.driver === 'string' ? driverFamily(entry.driver) : undefined;
  if (!family)
    return checkSetting(
      Type.Object({ name: NAME, driver: ENTRY_DRIVER }),
      { name: entry.name, driver: entry.driver },
      { path },
    );
  if (family.options.properties.serialPort || entry.port === undefined)
    return checkSetting(entrySchema(family), entry, { path });
  // "unknown setting" would not say why a port is wrong here.
  const { port: _port, ...rest } = entry;
  return [
    { path: `${path}.port`, message: `the ${family.name} driver takes no port; remove it` },
    ...checkSetting(entrySchema(family), rest, { path }),
  ];
}

/**
 * The store key of an amplifier named `name`: lower-case ASCII letters and digits joined by dashes ("Main floor" is
 * `main-floor`), so it is stable across restarts and reordering and safe in MQTT topics. A name with no such
 * characters gets a short hash of itself. The single amplifier of --driver is named after its driver, so its key is
 * the driver name, the one zones and inputs made before amplifier lists carry.
 */
export function amplifierKey(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents split off by NFKD: "Küche" is `kuche`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug) return slug;
  return `amp-${createHash('sha256').update(name.toLowerCase()).digest('hex').slice(0, 8)}`;
}

/** What the single amplifier's settings hold that its family refuses, by setting (`serialPort`, `pollIntervalMs`). */
export function singleAmplifierProblems(
  driver: string,
  serialPort: string | undefined,
  pollIntervalMs: number | undefined,
): SettingProblem[] {
  const family = driverFamily(driver)!;
  const takes = family.options.properties;
  const problems: SettingProblem[] = [];
  if (serialPort !== undefined && !takes.serialPort)
    problems.push({
      path: 'serialPort',
      message: `the ${driver} driver takes no serial port; choose a serial driver or drop it`,
    });
  if (pollIntervalMs !== undefined && !takes.pollIntervalMs)
    problems.push({ path: 'pollIntervalMs', message: `the ${driver} driver does not poll; drop it` });
  if (problems.length > 0) return problems;
  return checkSetting(family.options, { serialPort, pollIntervalMs }, { partial: true });
}

/** Whether the family of `driver` needs a serial port, and what it is (from its schema), for the error when none is given. */
export function serialPortNeeded(driver: string): string | undefined {
  const family = driverFamily(driver)!;
  return family.options.required?.includes('serialPort')
    ? family.options.properties.serialPort!.description
    : undefined;
}
