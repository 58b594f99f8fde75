// The three sources of settings, each read into a layer of checked values: command-line flags (node:util parseArgs,
// options generated from the settings), AZC_* environment variables and the JSON config file. Every problem names
// where its value came from: `flag --port`, `environment AZC_PORT`, `config file F, key "port"`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { checkSetting, closest } from '../../drivers/index.js';
import { CONFIG_FILE, FILE_SCHEMA, kindOf, SETTINGS, type Setting, settingAt } from './catalog.js';
import { parseJsonText } from './json-text.js';

export interface Layer {
  /** How this source spells a setting: `--port`, `AZC_PORT`, `"port"`. */
  nameOf(setting: Setting): string;
  /** Where a value of `setting` in this layer came from, for a message (`path`: a place inside it, file only). */
  where(setting: Setting, path?: string): string;
  /** What relative paths in this layer resolve against. */
  baseDir: string;
  /** Checked values, by setting path. */
  values: Map<string, unknown>;
}

export interface Reading {
  layer: Layer;
  /** One line each, naming the source. */
  problems: string[];
}

const byFlag = new Map(SETTINGS.filter((s) => s.flag).map((s) => [s.flag!, s]));
const byEnv = new Map(SETTINGS.filter((s) => s.env).map((s) => [s.env!, s]));
const refusedFlags = new Map(SETTINGS.filter((s) => s.refusedFlag).map((s) => [s.refusedFlag!, s]));
const refusedEnv = new Map(SETTINGS.filter((s) => s.refusedEnv).map((s) => [s.refusedEnv!, s]));

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/**
 * A setting's value from text (a flag or variable): decimal digits for numbers (Number() would also take "0x1F90",
 * "8e3" or " 80"), yes/no words for booleans, comma-separated lists. Text that is none of these is kept as it is, so
 * the schema's check names the expected form and shows what was given.
 */
function fromText(setting: Setting, text: string): unknown {
  switch (kindOf(setting)) {
    case 'Integer':
      return /^-?\d+$/.test(text) ? Number(text) : text;
    case 'Boolean': {
      const word = text.toLowerCase();
      return TRUE.includes(word) ? true : FALSE.includes(word) ? false : text;
    }
    case 'Array':
      return text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    default:
      return text;
  }
}

/** Checks a value from text against its setting; the problems name `where`. */
function checked(layer: Layer, setting: Setting, value: unknown, problems: string[]): void {
  const found = checkSetting(setting.schema, value);
  for (const problem of found) problems.push(`${layer.where(setting)}: ${problem.message}`);
  if (found.length === 0) layer.values.set(setting.path, value);
}

export function readFlags(argv: string[], cwd: string): Reading & { help: boolean; configFile?: string } {
  const options: NonNullable<ParseArgsConfig['options']> = {
    help: { type: 'boolean', short: 'h' },
    [CONFIG_FILE.flag]: { type: 'string' },
  };
  for (const [flag, setting] of byFlag) options[flag] = { type: kindOf(setting) === 'Boolean' ? 'boolean' : 'string' };
  const layer: Layer = {
    nameOf: (setting) => `--${setting.flag}`,
    where: (setting) => `flag --${setting.flag}`,
    baseDir: cwd,
    values: new Map(),
  };
  const problems: string[] = [];
  const lists = new Map<Setting, string[]>();
  let help = false;
  let configFile: string | undefined;
  let unknownAt = -1;
  for (const token of flagTokens(argv, options)) {
    if (token.kind === 'positional') {
      // Right after an unknown flag it is that flag's value, already refused with it.
      if (token.index !== unknownAt + 1)
        problems.push(`argument ${JSON.stringify(token.value)}: not a flag (flags start with --)`);
      continue;
    }
    if (token.kind !== 'option') continue;
    const { name, value } = token;
    const negated = name.startsWith('no-') ? byFlag.get(name.slice(3)) : undefined;
    const setting = byFlag.get(name) ?? (negated && kindOf(negated) === 'Boolean' ? negated : undefined);
    const missing = value === undefined;
    if (name === 'help') help = true;
    else if (name === CONFIG_FILE.flag) {
      if (missing) problems.push(`flag --${name}: needs a value`);
      else configFile = value;
    } else if (!setting) {
      const refused = refusedFlags.get(name);
      const near = closest(name, [...byFlag.keys(), CONFIG_FILE.flag, 'help']);
      problems.push(
        `flag ${token.rawName}: ${refused ? refused.schema.refused : `unknown flag${near ? `; did you mean --${near}?` : ''}`}`,
      );
      unknownAt = token.index;
    } else if (kindOf(setting) === 'Boolean') {
      if (setting === negated && value !== undefined) problems.push(`flag --${name}: takes no value`);
      else
        checked(
          layer,
          setting,
          setting === negated ? false : value === undefined ? true : fromText(setting, value),
          problems,
        );
    } else if (missing) {
      problems.push(`flag --${name}: needs a value`);
    } else if (kindOf(setting) === 'Array') {
      // Repeatable: each occurrence adds to the list.
      lists.set(setting, [...(lists.get(setting) ?? []), ...(fromText(setting, value) as string[])]);
    } else {
      checked(layer, setting, fromText(setting, value), problems);
    }
  }
  for (const [setting, list] of lists) checked(layer, setting, list, problems);
  return { layer, problems, help, configFile };
}

type Token = ReturnType<typeof parseArgs>['tokens'] extends Array<infer T> | undefined ? T : never;

/**
 * parseArgs' tokens, not strict so that unknown flags come back as tokens (to be named with the nearest known one).
 * A string flag swallows the next argument whatever it is; when that is another flag, the value was left out: the
 * flag gets none, and the arguments are read again from the other one.
 */
function* flagTokens(argv: string[], options: NonNullable<ParseArgsConfig['options']>): Generator<Token> {
  let offset = 0;
  for (;;) {
    const { tokens } = parseArgs({
      args: argv.slice(offset),
      options,
      strict: false,
      allowPositionals: true,
      tokens: true,
    });
    const swallowing = tokens.find(
      (token) => token.kind === 'option' && token.value?.startsWith('--') && !token.inlineValue,
    );
    for (const token of tokens) {
      if (token.kind === 'option' && token === swallowing) {
        yield { ...token, index: token.index + offset, value: undefined, inlineValue: undefined };
        break;
      }
      yield { ...token, index: token.index + offset };
    }
    if (!swallowing) return;
    offset += swallowing.index + 1;
  }
}

/** The AZC_* variables; an unknown one is refused only when it looks like a misspelt setting (others may be anyone's). */
export function readEnvironment(env: NodeJS.ProcessEnv, cwd: string): Reading & { configFile?: string } {
  const layer: Layer = {
    nameOf: (setting) => setting.env!,
    where: (setting) => `environment ${setting.env}`,
    baseDir: cwd,
    values: new Map(),
  };
  const problems: string[] = [];
  const known = [...byEnv.keys(), CONFIG_FILE.env];
  for (const [name, text] of Object.entries(env)) {
    // An empty variable counts as unset, as a shell's `AZC_PORT= azcd` means.
    if (!name.startsWith('AZC_') || text === undefined || text === '') continue;
    const setting = byEnv.get(name);
    if (setting) checked(layer, setting, fromText(setting, text), problems);
    else if (refusedEnv.has(name)) problems.push(`environment ${name}: ${refusedEnv.get(name)!.schema.refused}`);
    else if (name !== CONFIG_FILE.env) {
      const near = closest(
        name.slice('AZC_'.length),
        known.map((variable) => variable.slice('AZC_'.length)),
      );
      if (near !== undefined) problems.push(`environment ${name}: unknown variable; did you mean AZC_${near}?`);
    }
  }
  return { layer, problems, configFile: env[CONFIG_FILE.env] || undefined };
}

/** The config file: JSON, one object of known keys (at every level), each value checked. */
export function readConfigFile(file: string): Reading {
  const where = (setting: Setting | undefined, key?: string) => `config file ${file}, key "${key ?? setting!.fileKey}"`;
  const layer: Layer = {
    nameOf: (setting) => `"${setting.fileKey}"`,
    where,
    baseDir: path.dirname(file),
    values: new Map(),
  };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return {
      layer,
      problems: [
        `config file ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ],
    };
  }
  const json = parseJsonText(text);
  if (!json.ok)
    return { layer, problems: [`config file ${file}, line ${json.line}, column ${json.column}: ${json.problem}`] };
  const found = checkSetting(FILE_SCHEMA, json.value, { partial: true });
  const problems = found.map((problem) =>
    problem.path ? `${where(undefined, problem.path)}: ${problem.message}` : `config file ${file}: ${problem.message}`,
  );
  if (found.some((problem) => problem.path === '')) return { layer, problems };
  // The keys without a problem are kept even when others have one, so the amplifier list is checked along with them.
  const wrong = new Set(found.map((problem) => problem.path.split(/[.[]/)[0]));
  for (const [key, value] of Object.entries(json.value as Record<string, unknown>)) {
    if (wrong.has(key)) continue;
    const nested = settingAt(key)
      ? { [key]: value }
      : Object.fromEntries(Object.entries(value as object).map(([inner, v]) => [`${key}.${inner}`, v]));
    for (const [settingPath, v] of Object.entries(nested)) layer.values.set(settingPath, v);
  }
  return { layer, problems };
}
