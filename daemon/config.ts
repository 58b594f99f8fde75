// Typed configuration from the settings' schemas (daemon/config/): defaults < JSON config file (--config) < AZC_*
// environment < command-line flags, every value checked, every problem naming where its value came from.
import path from 'node:path';
import { defaultsOf } from '../drivers/index.js';
import {
  type AmplifierConfig,
  amplifierKey,
  serialPortNeeded,
  singleAmplifierProblems,
  toAmplifiers,
} from './config/amplifiers.js';
import { SECTIONS, type Settings, settingAt } from './config/catalog.js';
import { readPasswordFile } from './config/mqtt.js';
import { type Layer, readConfigFile, readEnvironment, readFlags } from './config/sources.js';

export { type AmplifierConfig, amplifierKey, MAX_AMPLIFIERS } from './config/amplifiers.js';
export { settingNames } from './config/catalog.js';
export { helpText } from './config/help.js';
export { mqttUrlProblem } from './config/mqtt.js';

/** The MQTT bridge's settings (docs/home-assistant.md); the password read from its file, if one was named. */
export type MqttConfig = Omit<Settings['mqtt'], 'passwordFile'>;

export type Config = Omit<Settings, 'amplifiers' | 'exportDir' | 'mqtt' | 'playback'> & {
  /** `<stateDir>/exports` unless set. */
  exportDir: string;
  /** The stream players' settings; `musicDir` is `<stateDir>/music` unless set. */
  playback: Omit<Settings['playback'], 'musicDir'> & { musicDir: string };
  /** The config file's list (docs/drivers.md, Several amplifiers); empty: the one of `driver` and `serialPort` (see amplifiersOf). */
  amplifiers: AmplifierConfig[];
  mqtt: MqttConfig;
};

/** The configuration cannot be used: one line per problem, each naming where its value came from. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

export interface LoadedConfig {
  config: Config;
  help: boolean;
}

export function defaultConfig(cwd = process.cwd()): Config {
  const settings = Object.assign(
    {},
    ...SECTIONS.map((section) =>
      section.key ? { [section.key]: defaultsOf(section.schema) } : defaultsOf(section.schema),
    ),
  );
  const stateDir = path.resolve(cwd, settings.stateDir);
  return {
    ...settings,
    stateDir,
    exportDir: path.join(stateDir, 'exports'),
    playback: { ...settings.playback, musicDir: defaultMusicDir(stateDir) },
  };
}

/** Where stream players play from unless `playback.musicDir` says otherwise: a folder the daemon creates when missing. */
export function defaultMusicDir(stateDir: string): string {
  return path.join(stateDir, 'music');
}

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const flags = readFlags(argv, cwd);
  if (flags.help) return { config: defaultConfig(cwd), help: true };
  const environment = readEnvironment(env, cwd);
  const configFile = flags.configFile ?? environment.configFile;
  // In order of precedence, lowest first.
  const readings = [
    ...(configFile === undefined ? [] : [readConfigFile(path.resolve(cwd, configFile))]),
    environment,
    flags,
  ];
  const chosen: Chosen = new Map();
  for (const { layer } of readings) for (const [key, value] of layer.values) chosen.set(key, { value, layer });
  const where = (key: string): string => chosen.get(key)!.layer.where(settingAt(key)!);

  const config = defaultConfig(cwd);
  for (const [key, { value, layer }] of chosen) {
    const { schema } = settingAt(key)!;
    const finished = schema.relativePath
      ? path.resolve(layer.baseDir, value as string)
      : schema.normalize
        ? schema.normalize(value as never)
        : value;
    if (key !== 'amplifiers' && key !== 'mqtt.passwordFile') setAt(config, key, finished);
  }
  if (!chosen.has('exportDir')) config.exportDir = path.join(config.stateDir, 'exports');
  if (!chosen.has('playback.musicDir')) config.playback.musicDir = defaultMusicDir(config.stateDir);
  // The list is the file's own: its entries are checked along with the rest of the file.
  refuse([...readings.flatMap((reading) => reading.problems), ...amplifierList(config, chosen, where)]);
  refuse(singleAmplifier(config, chosen, where));
  refuse(
    mqttPassword(
      config,
      chosen,
      where,
      readings.map((reading) => reading.layer),
    ),
  );
  return { config, help: false };
}

/** The amplifiers the daemon runs: the listed ones, or the single one of `driver` and `serialPort`. */
export function amplifiersOf(config: Config): AmplifierConfig[] {
  if (config.amplifiers.length > 0) return config.amplifiers;
  const options: AmplifierConfig['options'] =
    config.pollIntervalMs === undefined ? {} : { pollIntervalMs: config.pollIntervalMs };
  return [
    { name: config.driver, key: amplifierKey(config.driver), driver: config.driver, port: config.serialPort, options },
  ];
}

type Chosen = Map<string, { value: unknown; layer: Layer }>;

const SINGLE_AMPLIFIER = ['driver', 'serialPort', 'pollIntervalMs'];

/** The config file's list, entry by entry against each entry's family schema; with a single amplifier given too, refused. */
function amplifierList(config: Config, chosen: Chosen, where: (key: string) => string): string[] {
  const list = chosen.get('amplifiers');
  if (!list) return [];
  // Two descriptions of the hardware would leave one silently ignored: refuse, whichever layer set the single one.
  const problems = SINGLE_AMPLIFIER.filter((key) => chosen.has(key)).map(
    (key) =>
      `${where(key)}: is for a single amplifier, and the config file lists "amplifiers": describe every amplifier in the list and drop this`,
  );
  const { amplifiers, problems: found } = toAmplifiers(list.value as unknown[]);
  config.amplifiers = amplifiers;
  return [
    ...problems,
    ...found.map((problem) => `${list.layer.where(settingAt('amplifiers')!, problem.path)}: ${problem.message}`),
  ];
}

/** Without a list: driver, serial port and poll interval, checked against the driver family's schema. */
function singleAmplifier(config: Config, chosen: Chosen, where: (key: string) => string): string[] {
  if (chosen.has('amplifiers')) return [];
  const problems = singleAmplifierProblems(config.driver, config.serialPort, config.pollIntervalMs).map(
    (problem) => `${where(problem.path)}: ${problem.message}`,
  );
  const needed = serialPortNeeded(config.driver);
  if (needed && config.serialPort === undefined) {
    const { layer } = chosen.get('driver')!;
    problems.push(
      `${where('driver')}: the ${config.driver} driver needs ${layer.nameOf(settingAt('serialPort')!)} too: ${needed}`,
    );
  }
  return problems;
}

/** AZC_MQTT_PASSWORD, or the password file of the highest layer that names one. */
function mqttPassword(config: Config, chosen: Chosen, where: (key: string) => string, layers: Layer[]): string[] {
  const file = chosen.get('mqtt.passwordFile');
  const plain = chosen.get('mqtt.password');
  if (!file) return [];
  if (plain?.layer === file.layer)
    return [`${where('mqtt.passwordFile')}: the password is given directly too; give one of them`];
  if (plain && layers.indexOf(plain.layer) > layers.indexOf(file.layer)) return [];
  const read = readPasswordFile(path.resolve(file.layer.baseDir, file.value as string));
  if ('problem' in read) return [`${where('mqtt.passwordFile')}: ${read.problem}`];
  config.mqtt.password = read.password;
  return [];
}

function refuse(problems: string[]): void {
  if (problems.length > 0) throw new ConfigError(problems);
}

/** Sets a dotted path (`mqtt.url`) of the settings object. */
function setAt(target: object, key: string, value: unknown): void {
  const [head, rest] = key.split('.', 2) as [string, string | undefined];
  if (rest === undefined) (target as Record<string, unknown>)[head] = value;
  else setAt((target as Record<string, object>)[head]!, rest, value);
}
