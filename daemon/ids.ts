// Ids are UUIDs, kept in one form: lower case. Each front door decodes the ids it receives here, once: the REST API's
// path and body ids (daemon/http/schema.ts), MQTT command topics (daemon/mqtt/topics.ts) and a restored backup
// (daemon/domain/backup). The domain and the store only ever see the canonical form and never lower-case again.
import { FormatRegistry, type TSchema, Type } from '@sinclair/typebox';

/**
 * Whether `value` is a UUID in its text form (8-4-4-4-12 hex digits, either case). Every path id is checked per
 * request; a loop over the characters costs a fraction of the equivalent regular expression.
 */
export function isUuid(value: string): boolean {
  if (value.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = value.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
    } else if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46))) {
      return false;
    }
  }
  return true;
}

FormatRegistry.Set('uuid', isUuid);

/** The stored form of an id received in any letter case. */
export const canonicalId = (id: string): string => id.toLowerCase();

/** An id in a request body, path or backup document: a UUID in either case, which idDecoder turns canonical. */
export const Id = (description = 'identifier (UUID)') =>
  Type.String({ format: 'uuid', description, errorMessage: 'must be a UUID' });

/** Turns the ids of a value that passed its schema into their canonical form, in place, and returns the value. */
export type IdDecoder = (value: unknown) => unknown;

/**
 * The decoder of the ids (`format: 'uuid'`) a schema holds, through objects, arrays, unions and intersections;
 * undefined when it holds none, so a value without ids costs nothing. Run only on a value the schema accepted.
 */
export function idDecoder(schema: TSchema): IdDecoder | undefined {
  if (schema.format === 'uuid') return (value) => (typeof value === 'string' ? canonicalId(value) : value);
  if (schema.type === 'object' && schema.properties) {
    const fields: Array<[string, IdDecoder]> = [];
    for (const [key, property] of Object.entries(schema.properties as Record<string, TSchema>)) {
      const decode = idDecoder(property);
      if (decode) fields.push([key, decode]);
    }
    if (fields.length === 0) return undefined;
    return (value) => {
      // A union may have let another shape through (null, say): only an object has these fields.
      if (value === null || typeof value !== 'object') return value;
      const object = value as Record<string, unknown>;
      for (const [key, decode] of fields) if (object[key] !== undefined) object[key] = decode(object[key]);
      return value;
    };
  }
  if (schema.type === 'array' && schema.items && !Array.isArray(schema.items)) {
    const decode = idDecoder(schema.items as TSchema);
    if (!decode) return undefined;
    return (value) => {
      if (!Array.isArray(value)) return value;
      const array = value;
      for (let i = 0; i < array.length; i++) array[i] = decode(array[i]);
      return value;
    };
  }
  // A union's value passed one of its branches: each branch decodes what it calls an id (a UUID or null, say).
  const branches = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as TSchema[] | undefined;
  if (!Array.isArray(branches)) return undefined;
  const decoders = branches.map(idDecoder).filter((decode): decode is IdDecoder => decode !== undefined);
  if (decoders.length === 0) return undefined;
  return (value) => decoders.reduce((decoded, decode) => decode(decoded), value);
}
