// The settings part of docs/configuration.md, generated from the same schemas as --help: a table per section, then
// each driver family's options. `npm run docs:config` writes it; a test fails while the committed file differs.
import type { TObject } from '@sinclair/typebox';
import { DRIVER_FAMILIES } from '../../drivers/index.js';
import { CONFIG_FILE, SECTIONS, SETTINGS, type Setting } from './catalog.js';
import { defaultWords, familyOptions, flagText, rangeWords } from './help.js';

export const BEGIN =
  '<!-- settings: generated from the schemas by `npm run docs:config`; edit daemon/config/ and drivers/, not this -->';
export const END = '<!-- end of the generated settings -->';

const code = (text: string | undefined): string => (text === undefined ? '—' : `\`${text.replaceAll('|', '\\|')}\``);
const cell = (text: string | undefined): string => (text ?? '').replaceAll('|', '\\|').replaceAll('<', '&lt;');

/** The generated block, markers included. */
export function settingsReference(): string {
  const lines = [BEGIN, '', '## Settings', ''];
  lines.push(
    `The config file itself: \`--${CONFIG_FILE.flag} FILE\` or \`${CONFIG_FILE.env}\` (${CONFIG_FILE.description}).`,
  );
  for (const section of SECTIONS) {
    lines.push(
      '',
      `### ${section.title}`,
      '',
      '| Flag | Environment | Config key | Values | Default | What it does |',
      '|---|---|---|---|---|---|',
    );
    for (const setting of SETTINGS.filter((s) => s.section === section)) lines.push(settingRow(setting));
  }
  lines.push(
    '',
    '### Driver families',
    '',
    'Each entry of `"amplifiers"` is `{"name", "driver", ...}` with the options of its driver family:',
  );
  for (const family of DRIVER_FAMILIES) {
    lines.push('', `#### \`${family.name}\``, '', `${family.description}.`, '');
    lines.push(...optionRows(familyOptions(family)));
  }
  lines.push('', END);
  return lines.join('\n');
}

function settingRow(setting: Setting): string {
  const { schema } = setting;
  return `| ${code(flagText(setting))} | ${code(setting.env)} | ${code(setting.fileKey)} | ${cell(rangeWords(schema))} | ${cell(defaultWords(schema))} | ${cell(schema.description)} |`;
}

function optionRows(options: TObject): string[] {
  const keys = Object.keys(options.properties);
  if (keys.length === 0) return ['No options.'];
  return [
    '| Key | Values | Default | What it does |',
    '|---|---|---|---|',
    ...keys.map((key) => {
      const schema = options.properties[key]!;
      const fallback = options.required?.includes(key) ? 'required' : defaultWords(schema);
      return `| ${code(key)} | ${cell(rangeWords(schema))} | ${cell(fallback)} | ${cell(schema.description)} |`;
    }),
  ];
}

/** `document` with its generated block replaced by the one the schemas give now (appended when it has none). */
export function withSettingsReference(document: string): string {
  const begin = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (begin < 0 || end < begin) return `${document.trimEnd()}\n\n${settingsReference()}\n`;
  return `${document.slice(0, begin)}${settingsReference()}${document.slice(end + END.length)}`;
}
