// Route schemas: TypeBox types compiled once, JSON bodies parsed within a nesting bound, validation into field
// errors, shared building blocks.

import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { FormatRegistry, Type } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { Id, type IdDecoder, idDecoder } from '../ids.js';
import { nameProblem } from '../names.js';
import { badRequest, type FieldErrors, HttpError } from './problem.js';

export { isUuid } from '../ids.js';
export type { Static, TSchema };
export { Type as T };

FormatRegistry.Set('date-time', (value) => !Number.isNaN(Date.parse(value)));
/** A user-given name or title: no control characters, line breaks or bidi overrides (daemon/names.ts). */
FormatRegistry.Set('name', (value) => nameProblem(value) === undefined);

/** A schema option carrying the human message used when a value fails it. */
declare module '@sinclair/typebox' {
  interface SchemaOptions {
    errorMessage?: string;
  }
}

/** A path or body id: any letter case is accepted, and the handler gets it lower-cased (daemon/ids.ts). */
export const Uuid = Id;

export const Volume = Type.Number({
  minimum: 0,
  maximum: 1,
  format: 'double',
  description: 'fraction of full volume: 0.5 means 50%',
  errorMessage: 'must be a number from 0 to 1',
});

export const UuidList = (description: string) =>
  Type.Array(Uuid(), {
    minItems: 1,
    maxItems: 256,
    description,
    errorMessage: 'must be an array of 1 to 256 UUID strings',
  });

export const IdParams = Type.Object({ id: Uuid() });

/** Which fields a body must name, beside their types: read by Validator, and JSON Schema's own anyOf/oneOf in the document. */
const FIELD_RULE = Symbol('azc.fieldRule');

interface FieldRule {
  fields: string[];
  exactlyOne: boolean;
  /** The detail when none is given, and (exactly one) when several are. */
  none: string;
  several?: string;
}

/**
 * An object schema whose body must name at least one of `fields` (`anyOf` of `required` in the document): "send at
 * least one field" as a rule a client's validator applies too, not prose. Unknown fields never count.
 */
export function AtLeastOneOf<S extends TObject>(schema: S, fields: string[], none: string): S {
  return {
    ...schema,
    anyOf: fields.map((field) => ({ required: [field] })),
    [FIELD_RULE]: { fields, exactlyOne: false, none },
  };
}

/** An object schema whose body must name exactly one of `fields` (`oneOf` of `required` in the document). */
export function ExactlyOneOf<S extends TObject>(
  schema: S,
  fields: string[],
  messages: { none: string; several: string },
): S {
  return {
    ...schema,
    oneOf: fields.map((field) => ({ required: [field] })),
    [FIELD_RULE]: { fields, exactlyOne: true, ...messages },
  };
}

/** The field rule of a body schema, checked once its types are right; throws the 400 it describes. */
function checkFieldRule(schema: TSchema, value: unknown): void {
  const rule = (schema as { [FIELD_RULE]?: FieldRule })[FIELD_RULE];
  if (!rule) return;
  const named = rule.fields.filter((field) => (value as Record<string, unknown>)[field] !== undefined).length;
  if (named === 0 || (rule.exactlyOne && named > 1)) {
    const detail = named === 0 ? rule.none : rule.several!;
    const errors: FieldErrors = rule.exactlyOne
      ? Object.fromEntries(rule.fields.map((field) => [field, [detail]]))
      : { body: [detail] };
    throw badRequest(detail, errors);
  }
}

export class Validator<S extends TSchema> {
  private compiled: TypeCheck<S> | undefined;
  /** Lower-cases the ids of a valid value; null when the schema holds none (looked for on first use). */
  private ids: IdDecoder | null | undefined;
  constructor(readonly schema: S) {}

  /** Compiled on first use: start-up does not pay for the routes nobody calls. */
  private get check(): TypeCheck<S> {
    return (this.compiled ??= TypeCompiler.Compile(this.schema));
  }

  /** Returns the value typed, or throws a 400 naming each offending field. */
  parse(value: unknown, what: 'body' | 'path' | 'query'): Static<S> {
    let valid: boolean;
    try {
      valid = this.check.Check(value);
    } catch (err) {
      // Bad input is a 400 whatever its shape: a value too deep for the checker's recursion is one.
      if (err instanceof RangeError) throw badRequest(`the ${what} is nested too deeply to check`);
      throw err;
    }
    if (valid) {
      checkFieldRule(this.schema, value);
      const decode = (this.ids ??= idDecoder(this.schema) ?? null);
      return decode ? (decode(value) as Static<S>) : value;
    }
    const errors: FieldErrors = {};
    try {
      for (const error of this.check.Errors(value)) {
        const field = error.path === '' ? what : error.path.slice(1).replaceAll('/', '.');
        if (errors[field]) continue;
        errors[field] = [describe(field, error.schema, error.value, error.message)];
        if (Object.keys(errors).length >= 20) break;
      }
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      // Keep what was found; the rest of a value too deep to walk is reported as the value itself.
      errors[what] ??= [`the ${what} is nested too deeply to check`];
    }
    const first = Object.values(errors)[0]?.[0] ?? `invalid ${what}`;
    throw badRequest(what === 'body' ? first : `invalid ${what} parameter: ${first}`, errors);
  }
}

function describe(field: string, schema: TSchema, value: unknown, fallback: string): string {
  if (value === undefined) return `"${field}" is required`;
  // Which character is wrong, and where: the name itself may not show it.
  const nameIssue = schema.format === 'name' && typeof value === 'string' ? nameProblem(value) : undefined;
  if (nameIssue) return `"${field}" ${nameIssue}`;
  const message = schema.errorMessage ?? fallback.charAt(0).toLowerCase() + fallback.slice(1);
  // Secrets (passwords) are never echoed back, not even when they have the wrong type.
  if (schema.writeOnly) return `"${field}" ${message}`;
  return `"${field}" ${message}, got ${shown(value)}`;
}

/** The start of a value as JSON for a message; a value too deep to encode is named by its type. */
function shown(value: unknown): string {
  let got: string | undefined;
  try {
    got = JSON.stringify(value);
  } catch {
    got = undefined;
  }
  if (got === undefined) return Array.isArray(value) ? 'an array' : typeof value;
  return got.length > 60 ? `${got.slice(0, 57)}...` : got;
}

/**
 * How deeply a JSON body may nest arrays and objects. Every request body of the API is at most three levels
 * deep; the bound keeps hostile bodies away from the recursion in validation and error messages.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Parses a request body as JSON: 415 unless the media type is JSON, 400 when it is empty, nests deeper than
 * MAX_JSON_DEPTH, or is not JSON.
 */
export function parseJsonBody(buffer: Buffer, contentType: string): unknown {
  if (buffer.length === 0 && !contentType) throw badRequest('a JSON request body is required');
  checkJsonMediaType(contentType);
  if (buffer.length === 0) throw badRequest('a JSON request body is required');
  if (nestsDeeperThan(buffer, MAX_JSON_DEPTH)) {
    throw badRequest(
      `the request body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep; send a flatter body`,
    );
  }
  try {
    return JSON.parse(buffer.toString('utf8'));
  } catch (err) {
    // Only the position: the parser's message quotes the body, which may hold a password.
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    throw badRequest(`the request body is not valid JSON${position ? ` (error at byte ${position})` : ''}`);
  }
}

/** 415 unless the Content-Type is JSON (application/json or application/*+json). */
export function checkJsonMediaType(contentType: string): void {
  // The exact common form first: most clients send just this.
  const mediaType = contentType === 'application/json' ? contentType : contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json' && !/^application\/[a-z0-9.+-]*\+json$/.test(mediaType)) {
    throw new HttpError(
      415,
      `send the body as Content-Type: application/json (got ${contentType ? `"${contentType.slice(0, 80)}"` : 'none'})`,
    );
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** Whether brackets outside strings nest deeper than `max`; one pass over the bytes, skipped for short bodies. */
export function nestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  // Each level needs an opening byte: a body this short cannot be too deep.
  if (bytes.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
  }
  return false;
}
