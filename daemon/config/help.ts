// `azcd --help`, generated from the settings' schemas: grouped by section, each setting with its flag, variable,
// config-file key, range, default and description, then every driver family's options for the amplifier list.
import { Kind, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { DRIVER_FAMILIES, type DriverFamily, literals } from '../../drivers/index.js';
import { entrySchema } from './amplifiers.js';
import { CONFIG_FILE, kindOf, SECTIONS, SETTINGS, type Setting } from './catalog.js';

const WIDTH = 100;
const INDENT = '      ';

/** What a flag's value is, in a word or as its choices. */
function valueName(setting: Setting): string {
  if (setting.schema.valueName) return setting.schema.valueName;
  const kind = kindOf(setting);
  if (kind === 'Union') return literals(setting.schema).join('|');
  return kind === 'Integer' ? 'N' : kind === 'Array' ? 'LIST' : 'TEXT';
}

/** The flag as typed: `--port N`, `--ssdp / --no-ssdp`. */
export function flagText(setting: Setting): string | undefined {
  if (!setting.flag) return undefined;
  if (kindOf(setting) === 'Boolean') return `--${setting.flag} / --no-${setting.flag}`;
  return `--${setting.flag} ${valueName(setting)}`;
}

/** The values a schema allows beyond its type, in words: `0 to 65535`, `one of auto, off`. */
export function rangeWords(schema: TSchema): string | undefined {
  if (schema[Kind] === 'Integer' && schema.minimum !== undefined) return `${schema.minimum} to ${schema.maximum}`;
  if (schema[Kind] === 'Union') return `one of ${literals(schema).join(', ')}`;
  return schema[Kind] === 'Array' && schema.flag !== false
    ? 'a list: comma-separated, or the flag repeated'
    : undefined;
}

/** The default of a schema in words, if it has one. */
export function defaultWords(schema: TSchema): string | undefined {
  const value: unknown = schema.default;
  if (schema.defaultText !== undefined) return schema.defaultText;
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (value === '' || (Array.isArray(value) && value.length === 0)) return 'none';
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** Range, whether required, and default: `0 to 65535; default 8080`. */
function facts(schema: TSchema, { required = false, choices = true } = {}): string {
  const range = rangeWords(schema);
  const fallback = defaultWords(schema);
  const words = [
    schema[Kind] === 'Union' && !choices ? undefined : range,
    required ? 'required' : undefined,
    fallback === undefined ? undefined : `default ${fallback}`,
  ];
  return words.filter((word) => word !== undefined).join('; ');
}

export function helpText(version: string): string {
  const lines = [
    `azcd ${version}: controls a multi-zone amplifier (REST API, event stream, dashboard, MQTT, SSDP).`,
    '',
    'usage: azcd [flags]',
    '',
    ...wrap(
      'Settings come from defaults < the config file < AZC_* environment variables < flags. Each setting shows its flag, variable and config-file key; docs/configuration.md lists the same.',
      '',
    ),
    '',
    '  -h, --help',
    `${INDENT}this text`,
    `  --config FILE  ·  ${CONFIG_FILE.env}`,
    ...wrap(CONFIG_FILE.description, INDENT),
  ];
  for (const section of SECTIONS) {
    lines.push('', section.title);
    for (const setting of SETTINGS.filter((s) => s.section === section)) lines.push(...settingLines(setting));
  }
  lines.push('', 'Driver families: each entry of "amplifiers" is {"name", "driver", "port", ...its family\'s options}');
  for (const family of DRIVER_FAMILIES) {
    lines.push(`  ${family.name}`, ...wrap(family.description, '    '));
    lines.push(...optionLines(familyOptions(family)));
  }
  return `${lines.join('\n')}\n`;
}

function settingLines(setting: Setting): string[] {
  const names = [flagText(setting), setting.env, setting.fileKey ? `"${setting.fileKey}"` : undefined].filter(
    (n) => n !== undefined,
  );
  const only =
    !setting.flag && !setting.fileKey
      ? ' (environment only)'
      : !setting.flag && !setting.env
        ? ' (config file only)'
        : '';
  const known = facts(setting.schema, { choices: !setting.flag });
  return [
    `  ${names.join('  ·  ')}${only}`,
    ...wrap(`${setting.schema.description}${known ? ` (${known})` : ''}`, INDENT),
  ];
}

/** A family's options as an entry of the amplifier list spells them (its serial port as `port`). */
export function familyOptions(family: DriverFamily): TObject {
  const { name: _name, driver: _driver, ...options } = entrySchema(family).properties;
  return Type.Object(options);
}

function optionLines(options: TObject): string[] {
  return Object.entries(options.properties).flatMap(([name, schema]) => {
    const known = facts(schema, { required: options.required?.includes(name) });
    return wrap(
      `${schema.description}${known ? ` (${known})` : ''}`,
      `    ${name.padEnd(24)}`,
      `    ${' '.repeat(24)}`,
    );
  });
}

/** Words filled into lines of at most WIDTH characters; `next` indents the lines after the first. */
function wrap(text: string, indent: string, next = indent): string[] {
  const lines: string[] = [];
  let line = indent;
  for (const word of text.split(' ')) {
    const blank = line === indent || line === next;
    if (!blank && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = next + word;
    } else line += (blank ? '' : ' ') + word;
  }
  lines.push(line);
  return lines;
}
