// The settings as the three sources name them: every section's schema, each setting with its flag, AZC_* variable
// and config-file key (derived from its path unless its schema says otherwise), and the config file's schema.
import { Kind, type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { AMPLIFIER } from './amplifiers.js';
import { MQTT } from './mqtt.js';
import { DISCOVERY, FIRST_START, LIMITS, LOGGING, PLAYBACK, SECURITY, SERVER, SSE, STATE } from './sections.js';

export interface Section {
  title: string;
  /** The key its settings sit under (`mqtt.url`); none: they are top-level keys. */
  key?: string;
  schema: TObject;
}

const section = <S extends TObject, K extends string | undefined = undefined>(
  title: string,
  schema: S,
  key: K = undefined as K,
) => ({ title, schema, key });

/** In the order --help and docs/configuration.md list them. */
const SECTION_LIST = [
  section('Server', SERVER),
  section('State', STATE),
  section('Amplifiers', AMPLIFIER),
  section('Logging', LOGGING),
  section('Discovery', DISCOVERY),
  section('Home Assistant bridge (MQTT)', MQTT, 'mqtt'),
  section('Sign-in and sessions', SECURITY),
  section('Event stream', SSE, 'sse'),
  section('Stream players', PLAYBACK, 'playback'),
  section('Limits', LIMITS, 'limits'),
  section('First start', FIRST_START),
] as const;

export const SECTIONS: readonly Section[] = SECTION_LIST;

type Entry = (typeof SECTION_LIST)[number];
/** One section's settings as its schema types them: under its key, or at the top level. */
type SettingsOf<E> = E extends { key: infer K extends string; schema: infer S extends TSchema }
  ? { [P in K]: Static<S> }
  : E extends { schema: infer S extends TSchema }
    ? Static<S>
    : never;
/** A union of object types made into their intersection (every member's keys at once). */
type AllOf<U> = (U extends unknown ? (all: U) => void : never) extends (all: infer I) => void ? I : never;

/** Every setting as its schema types it: the sections put together, so the list above is the only list. */
export type Settings = AllOf<SettingsOf<Entry>>;

export interface Setting {
  /** As the config file and the Config object nest it: `port`, `mqtt.url`. */
  path: string;
  section: Section;
  schema: TSchema;
  /** Without "--"; none when it cannot be set by a flag. */
  flag?: string;
  env?: string;
  /** none when it cannot be set in the config file. */
  fileKey?: string;
  /** The flag or variable it refuses (`--mqtt-password`), when its schema gives the reason (`refused`). */
  refusedFlag?: string;
  refusedEnv?: string;
}

export const SETTINGS: readonly Setting[] = SECTIONS.flatMap((section) =>
  Object.entries(section.schema.properties).map(([key, schema]) => describe(section, key, schema)),
);

function describe(section: Section, key: string, schema: TSchema): Setting {
  const path = section.key ? `${section.key}.${key}` : key;
  const words = path.replaceAll('.', '-').replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  const flag = schema.flag === false ? undefined : (schema.flag ?? words);
  const env = schema.env === false ? undefined : (schema.env ?? `AZC_${words.toUpperCase().replaceAll('-', '_')}`);
  return {
    path,
    section,
    schema,
    flag,
    env,
    fileKey: schema.fileKey === false ? undefined : path,
    refusedFlag: schema.flag === false && schema.refused ? words : undefined,
    refusedEnv: schema.env === false && schema.refused ? `AZC_${words.toUpperCase().replaceAll('-', '_')}` : undefined,
  };
}

/** The setting of a path (`mqtt.url`). */
export const settingAt = (path: string): Setting | undefined => SETTINGS.find((setting) => setting.path === path);

/** Every way a setting is given, for a message that must name them all: `--mqtt-url (AZC_MQTT_URL, "mqtt.url")`. */
export function settingNames(path: string): string {
  const setting = settingAt(path)!;
  const [first, ...others] = [
    setting.flag && `--${setting.flag}`,
    setting.env,
    setting.fileKey && `"${setting.fileKey}"`,
  ].filter((name) => name);
  return others.length > 0 ? `${first} (${others.join(', ')})` : first!;
}

/** The kind of value a setting holds: Integer, Boolean, String, Array, Union (a choice). */
export const kindOf = (setting: Setting): string => String(setting.schema[Kind]);

/** The flag and variable naming the config file itself: a config file cannot name another. */
export const CONFIG_FILE = {
  flag: 'config',
  env: 'AZC_CONFIG',
  description: 'the JSON configuration file; relative paths in it resolve against its folder',
};

/** The config file's schema: every key it may hold; one that is known but taken elsewhere only is refused with the reason. */
export const FILE_SCHEMA: TObject = Type.Object(
  Object.fromEntries(
    SECTIONS.flatMap((section) => {
      const keys = fileKeys(section.schema);
      return section.key ? [[section.key, Type.Object(keys)]] : Object.entries(keys);
    }),
  ),
);

function fileKeys(schema: TObject): Record<string, TSchema> {
  const keys: Record<string, TSchema> = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    if (property.fileKey !== false) keys[key] = property;
    else if (property.refused) keys[key] = Type.Never({ refused: property.refused });
  }
  return keys;
}
