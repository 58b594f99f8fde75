// `node --import tsx scripts/ui-types.ts` (npm run ui:types): writes daemon/ui/schemas.d.ts, the dashboard's types of
// the resources and events, from the TypeBox schemas the daemon validates and documents with, so the dashboard's type
// check (tsconfig.ui.json) follows the API instead of a copy of it. The file is declarations only: azcd does not
// serve it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import { LibraryEntrySchema } from '../daemon/api/library.js';
import {
  PlaylistSchema,
  PlaylistSummarySchema,
  ProblemSchema,
  SkippedSchema,
  TrackSchema,
  UserSchema,
} from '../daemon/api/schemas.js';
import {
  AmplifierStatusSchema,
  AnnouncementSchema,
  DomainEventSchema,
  EngineSchema,
  InputDeviceSchema,
  PlaybackSchema,
  PlayerSchema,
  SceneSchema,
  StreamOutputSchema,
  StreamResetSchema,
  ToneControlsSchema,
  ZoneSchema,
  ZoneToneSchema,
} from '../daemon/domain/shared/index.js';
import { PROJECT_ROOT } from '../daemon/paths.js';

export const UI_TYPES_FILE = path.join(PROJECT_ROOT, 'daemon', 'ui', 'schemas.d.ts');

/**
 * The types written, by name, in this order. A schema used inside another is written by its name there, so a
 * player in `player.created` is a `Player`, not a second copy of its shape.
 */
const NAMED: [string, TSchema][] = [
  ['StreamOutput', StreamOutputSchema],
  ['Player', PlayerSchema],
  ['ZoneTone', ZoneToneSchema],
  ['ToneControls', ToneControlsSchema],
  ['AmplifierStatus', AmplifierStatusSchema],
  ['Zone', ZoneSchema],
  ['InputDevice', InputDeviceSchema],
  ['Scene', SceneSchema],
  ['Engine', EngineSchema],
  ['Playback', PlaybackSchema],
  ['Announcement', AnnouncementSchema],
  ['User', UserSchema],
  ['Track', TrackSchema],
  ['Playlist', PlaylistSchema],
  ['PlaylistSummary', PlaylistSummarySchema],
  ['LibraryEntry', LibraryEntrySchema],
  ['Problem', ProblemSchema],
  ['Skipped', SkippedSchema],
  ['DomainEvent', DomainEventSchema],
  ['StreamReset', StreamResetSchema],
];

const comment = (schema: TSchema, indent: string): string =>
  typeof schema.description === 'string' ? `${indent}/** ${schema.description.replaceAll('*/', '*\\/')} */\n` : '';

/** The TypeScript type of one JSON schema, as TypeBox writes them (the kinds the API's schemas use). */
function typeOf(schema: TSchema, indent: string, self?: string): string {
  const named = NAMED.find(([name, s]) => s === schema && name !== self);
  if (named) return named[0];
  if ('const' in schema) return JSON.stringify(schema.const).replace(/^"(.*)"$/, "'$1'");
  if (schema.anyOf) return (schema.anyOf as TSchema[]).map((s) => typeOf(s, indent)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = typeOf(schema.items as TSchema, indent);
      return /[ |]/.test(item) && !item.startsWith('{') ? `(${item})[]` : `${item}[]`;
    }
    case 'object': {
      if (schema.patternProperties) {
        const [value] = Object.values(schema.patternProperties as Record<string, TSchema>);
        return `Record<string, ${typeOf(value!, indent)}>`;
      }
      const required = new Set<string>((schema.required as string[] | undefined) ?? []);
      const inner = `${indent}  `;
      const fields = Object.entries((schema.properties ?? {}) as Record<string, TSchema>).map(
        ([key, value]) =>
          `${comment(value, inner)}${inner}${key}${required.has(key) ? '' : '?'}: ${typeOf(value, inner)};\n`,
      );
      return `{\n${fields.join('')}${indent}}`;
    }
    default:
      throw new Error(
        `ui-types: no TypeScript type for the schema ${JSON.stringify(schema)}: add its kind to typeOf()`,
      );
  }
}

/** A union of events, one member a line with its description, so each reads as the API documents it. */
function union(schema: TSchema): string {
  return (schema.anyOf as TSchema[]).map((member) => `${comment(member, '  ')}  | ${typeOf(member, '  ')}\n`).join('');
}

/** The declarations file's text, formatted as the tree is (biome), so the file passes the linter as written. */
export function renderUiTypes(): string {
  const declarations = NAMED.map(([name, schema]) => {
    const body = schema.anyOf && name === 'DomainEvent' ? `\n${union(schema)}` : ` ${typeOf(schema, '', name)}`;
    return `${comment(schema, '')}type ${name} =${body};\n`;
  });
  const source = [
    '// Generated from the TypeBox schemas by scripts/ui-types.ts (`node --import tsx scripts/ui-types.ts`): do not\n',
    "// edit. The dashboard's resources and events as the API sends them, global types for its JSDoc (tsconfig.ui.json);\n",
    '// never served.\n',
    ...declarations.map((d) => `\n${d}`),
  ].join('');
  const biome = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'biome');
  const formatted = spawnSync(biome, ['format', `--stdin-file-path=${UI_TYPES_FILE}`], {
    cwd: PROJECT_ROOT,
    input: source,
    encoding: 'utf8',
  });
  if (formatted.status !== 0) throw new Error(`ui-types: biome could not format the declarations: ${formatted.stderr}`);
  return formatted.stdout;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const after = renderUiTypes();
  const before = existsSync(UI_TYPES_FILE) ? readFileSync(UI_TYPES_FILE, 'utf8') : '';
  const name = path.relative(process.cwd(), UI_TYPES_FILE);
  if (after === before) process.stdout.write(`${name} is up to date\n`);
  else {
    writeFileSync(UI_TYPES_FILE, after);
    process.stdout.write(`${name} written from the schemas\n`);
  }
}
