// Route schemas: TypeBox types compiled once, validation into field errors, shared building blocks.
import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { FormatRegistry } from '@sinclair/typebox';
import { badRequest, type FieldErrors } from './problem.js';

export { Type as T };
export type { TSchema, Static };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
FormatRegistry.Set('uuid', (value) => UUID_RE.test(value));
FormatRegistry.Set('date-time', (value) => !Number.isNaN(Date.parse(value)));

/** A schema option carrying the human message used when a value fails it. */
declare module '@sinclair/typebox' {
  interface SchemaOptions {
    errorMessage?: string;
  }
}

export const Uuid = (description = 'identifier (UUID)') =>
  Type.String({ format: 'uuid', description, errorMessage: 'must be a UUID' });

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

export class Validator<S extends TSchema> {
  private readonly check: TypeCheck<S>;
  constructor(readonly schema: S) {
    this.check = TypeCompiler.Compile(schema);
  }

  /** Returns the value typed, or throws a 400 naming each offending field. */
  parse(value: unknown, what: 'body' | 'path' | 'query'): Static<S> {
    if (this.check.Check(value)) return value;
    const errors: FieldErrors = {};
    for (const error of this.check.Errors(value)) {
      const field = error.path === '' ? what : error.path.slice(1).replaceAll('/', '.');
      if (errors[field]) continue;
      errors[field] = [describe(field, error.schema, error.value, error.message)];
      if (Object.keys(errors).length >= 20) break;
    }
    const first = Object.values(errors)[0]?.[0] ?? `invalid ${what}`;
    throw badRequest(what === 'body' ? first : `invalid ${what} parameter: ${first}`, errors);
  }
}

function describe(field: string, schema: TSchema, value: unknown, fallback: string): string {
  if (value === undefined) return `"${field}" is required`;
  const message = schema.errorMessage ?? fallback.charAt(0).toLowerCase() + fallback.slice(1);
  // Secrets (passwords) are never echoed back, not even when they have the wrong type.
  if (schema.writeOnly) return `"${field}" ${message}`;
  const got = JSON.stringify(value);
  const shown = got === undefined ? typeof value : got.length > 60 ? `${got.slice(0, 57)}...` : got;
  return `"${field}" ${message}, got ${shown}`;
}
