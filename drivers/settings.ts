// Settings described by TypeBox schemas, shared by the driver families (their options) and the daemon's
// configuration: what a setting carries besides JSON Schema, the check that lists every problem of a value (names
// nobody knows refused, with "did you mean"), and the defaults a schema declares.
import { Kind, type TArray, type TObject, type TSchema } from '@sinclair/typebox';

declare module '@sinclair/typebox' {
  interface SchemaOptions {
    /** Why a value of the right type is still wrong, in words ("… is not a valid network serial port …"). */
    check?: (value: never) => string | undefined;
    /** Names a user may reach for instead of this one; a key spelt like them is told this one's name. */
    alsoCalled?: string[];
    /** The default in words, where it is not a constant ("the model's", "<stateDir>/exports"). */
    defaultText?: string;
    /** On a `Type.Never`: a name that is known but not taken here, and why. */
    refused?: string;
  }
}

export interface SettingProblem {
  /** Where, as a config file spells it (`amplifiers[1].port`, `mqtt.url`); '' for the value itself. */
  path: string;
  message: string;
}

export interface CheckOptions {
  /** Where the value sits, prefixed to every problem's path. */
  path?: string;
  /** Required keys may be left out (a layer of settings over defaults). */
  partial?: boolean;
}

/** Every problem of `value` against `schema`, in document order; none when it fits. */
export function checkSetting(schema: TSchema, value: unknown, options: CheckOptions = {}): SettingProblem[] {
  const problems: SettingProblem[] = [];
  visit(schema, value, options.path ?? '', options.partial ?? false, problems);
  return problems;
}

function visit(schema: TSchema, value: unknown, path: string, partial: boolean, out: SettingProblem[]): void {
  const problem = (message: string): void => void out.push({ path, message });
  const got = schema.writeOnly ? '' : `, got ${shown(value)}`;
  switch (schema[Kind]) {
    case 'Object':
      return visitObject(schema as TObject, value, path, partial, out);
    case 'Array': {
      const { items, minItems = 0, maxItems = Infinity } = schema as TArray;
      if (!Array.isArray(value)) return problem(`must be a list${sizeText(minItems, maxItems)}${got}`);
      if (value.length < minItems || value.length > maxItems)
        return problem(`must be a list${sizeText(minItems, maxItems)}, got ${value.length}`);
      value.forEach((item, i) => visit(items, item, `${path}[${i}]`, partial, out));
      break;
    }
    case 'Integer':
    case 'Number': {
      const what = schema[Kind] === 'Integer' ? 'an integer' : 'a number';
      const { minimum = -Infinity, maximum = Infinity } = schema;
      const fits =
        typeof value === 'number' && Number.isFinite(value) && (what === 'a number' || Number.isInteger(value));
      if (!fits || value < minimum || value > maximum)
        return problem(`must be ${what}${rangeText(minimum, maximum)}${got}`);
      break;
    }
    case 'Boolean':
      if (typeof value !== 'boolean') return problem(`must be true or false${got}`);
      break;
    case 'String': {
      const { minLength = 0, maxLength = Infinity } = schema;
      if (typeof value !== 'string' || value.length < minLength)
        return problem(`must be a ${minLength > 0 ? 'non-empty ' : ''}string${got}`);
      if (value.length > maxLength) return problem(`must be at most ${maxLength} characters long${got}`);
      break;
    }
    case 'Union':
    case 'Literal': {
      const choices = literals(schema);
      if (!choices.includes(value as string | number)) {
        const near = typeof value === 'string' ? closest(value, choices.map(String)) : undefined;
        return problem(`must be one of ${choices.join(', ')}${got}${near ? `; did you mean "${near}"?` : ''}`);
      }
      break;
    }
    case 'Never':
      return problem(schema.refused ?? 'is not taken here');
    case 'Unknown':
      return;
    default:
      throw new Error(`settings schema at "${path}": ${String(schema[Kind])} is not a kind settings use`);
  }
  const wrong = schema.check?.(value as never);
  if (wrong) problem(wrong);
}

function visitObject(schema: TObject, value: unknown, path: string, partial: boolean, out: SettingProblem[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    out.push({
      path,
      message: `must be an object like { "${Object.keys(schema.properties)[0]}": … }, got ${shown(value)}`,
    });
    return;
  }
  const record = value as Record<string, unknown>;
  for (const [key, item] of Object.entries(record)) {
    const inner = join(path, key);
    const property = schema.properties[key];
    // A key set to undefined is a key left out (options built in code); JSON has no undefined.
    if (item === undefined) continue;
    if (property) visit(property, item, inner, partial, out);
    else out.push({ path: inner, message: unknownMessage(key, schema) });
  }
  if (partial) return;
  for (const key of schema.required ?? []) {
    if (record[key] === undefined)
      out.push({
        path: join(path, key),
        message: `is required: ${schema.properties[key]!.description ?? 'give it a value'}`,
      });
  }
}

/** "unknown setting", with the known key it is most likely a misspelling of (here, or one level down). */
function unknownMessage(key: string, schema: TObject): string {
  const names = new Map<string, string>();
  for (const [name, property] of Object.entries(schema.properties)) {
    if (property[Kind] === 'Never') continue;
    names.set(name, name);
    for (const other of property.alsoCalled ?? []) names.set(other, name);
    if (property[Kind] === 'Object') {
      for (const inner of Object.keys((property as TObject).properties))
        if (!names.has(inner)) names.set(inner, `${name}.${inner}`);
    }
  }
  const near = closest(key, [...names.keys()]);
  if (near !== undefined) return `unknown setting; did you mean "${names.get(near)}"?`;
  const own = Object.keys(schema.properties).filter((name) => schema.properties[name]![Kind] !== 'Never');
  return own.length <= 16 ? `unknown setting; known here: ${own.join(', ')}` : 'unknown setting';
}

/** The defaults `schema` declares, nested as the settings are (objects without any default are left out). */
export function defaultsOf(schema: TObject): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    if (property.default !== undefined) defaults[key] = structuredClone(property.default);
    else if (property[Kind] === 'Object') defaults[key] = defaultsOf(property as TObject);
  }
  return defaults;
}

/** The values a choice schema (a literal, or a union of literals) allows. */
export function literals(schema: TSchema): Array<string | number> {
  const members: TSchema[] = schema[Kind] === 'Union' ? schema.anyOf : [schema];
  return members.map((member) => {
    if (member[Kind] !== 'Literal') throw new Error('a choice setting is a union of literals');
    return member.const as string | number;
  });
}

/**
 * The name among `names` that `word` most likely misspells: case, dashes, underscores and dots aside, at most one
 * edit per four characters (at least one) away, counting a swap of neighbours as one edit.
 */
export function closest(word: string, names: readonly string[]): string | undefined {
  const plain = (name: string): string => name.toLowerCase().replace(/[-_.]/g, '');
  const target = plain(word);
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const candidate = plain(name);
    const distance = editDistance(target, candidate);
    if (distance <= Math.max(1, Math.floor(candidate.length / 4)) && (!best || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

function rangeText(min: number, max: number): string {
  if (min > -Infinity && max < Infinity) return ` from ${min} to ${max}`;
  if (min > -Infinity) return ` of at least ${min}`;
  return max < Infinity ? ` of at most ${max}` : '';
}

function sizeText(min: number, max: number): string {
  if (max < Infinity) return ` of ${Math.max(min, 0)} to ${max} entries`;
  return min > 0 ? ` of at least ${min} entries` : '';
}

/** The start of a value as JSON, for a message. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
