// Checks real answers against the daemon's own OpenAPI document, as a validating proxy (prism) would: the status is
// documented for the operation, every documented header is there and every API header sent is documented, and the
// body matches its media type and schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { nameProblem } from '../../daemon/names.js';

type Json = any;

/** Headers whose presence means something to a client: each must be documented where the daemon sends it. */
const API_HEADERS = [
  'x-request-id',
  'www-authenticate',
  'allow',
  'retry-after',
  'x-total-count',
  'link',
  'content-disposition',
  'cache-control',
];
const DOC_ID = 'azc-openapi';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** A request as sent and the answer it got. */
export interface AnsweredRequest {
  method: string;
  /** The path as sent, without the query. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

export class OpenApiCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  /** "GET /api/players/{id} 200" for every answer checked. */
  readonly seen = new Set<string>();

  constructor(readonly doc: Json) {
    addFormats(this.ajv);
    for (const format of ['double', 'float', 'int32', 'int64']) this.ajv.addFormat(format, true);
    // The daemon's own format for names people give: the same rule, so a name the daemon refuses fails here too.
    this.ajv.addFormat('name', (value: string) => nameProblem(value) === undefined);
    // The document as one schema, so its $refs (#/components/...) resolve wherever a fragment of it is compiled.
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  /** Every operation as "METHOD /template". */
  get operations(): string[] {
    return Object.entries(this.doc.paths as Record<string, Record<string, unknown>>).flatMap(([template, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${template}`),
    );
  }

  /** The path template a request path matches (static segments before parameters), if any. */
  template(path: string): string | undefined {
    const segments = path.split('/');
    const candidates = Object.keys(this.doc.paths).filter((template) => {
      const parts = template.split('/');
      return parts.length === segments.length && parts.every((part, i) => part.startsWith('{') || part === segments[i]);
    });
    // The most static segments wins, as in the router.
    const statics = (template: string) => template.split('/').filter((part) => !part.startsWith('{')).length;
    return candidates.sort((a, b) => statics(b) - statics(a))[0];
  }

  /** Problems of one answer; none means a validating proxy would pass it. */
  checkResponse(answered: AnsweredRequest): string[] {
    const { method, path, status, headers, text } = answered;
    const where = `${method} ${path} → ${status}`;
    const template = this.template(path);
    if (!template) return [`${where}: the path is not in the document`];
    const item = this.doc.paths[template];
    // A method the path does not have (405) is documented on each of its operations.
    const opMethod = item[method.toLowerCase()]
      ? method.toLowerCase()
      : status === 405
        ? Object.keys(item)[0]!
        : undefined;
    if (!opMethod) return [`${where}: ${method} ${template} is not in the document`];
    this.seen.add(
      `${opMethod.toUpperCase()} ${template} ${status}${opMethod === method.toLowerCase() ? '' : ` (${method})`}`,
    );
    const response = item[opMethod].responses[String(status)];
    if (!response) return [`${where}: status ${status} is not documented for ${opMethod.toUpperCase()} ${template}`];
    const problems: string[] = [];
    const pointer = `#/paths/${pointerSegment(template)}/${opMethod}/responses/${status}`;
    const documented = Object.fromEntries(
      Object.entries(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), h as Json]),
    );
    for (const [name, header] of Object.entries(documented)) {
      const value = headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${where}: documented header ${name} is missing`);
        continue;
      }
      const original = Object.keys(response.headers).find((n) => n.toLowerCase() === name)!;
      const validate = this.ajv.getSchema(`${DOC_ID}${pointer}/headers/${pointerSegment(original)}/schema`);
      if (validate && !validate(value))
        problems.push(`${where}: header ${name}: ${this.ajv.errorsText(validate.errors)}`);
    }
    for (const name of API_HEADERS) {
      if (headers.get(name) !== null && !documented[name])
        problems.push(`${where}: header ${name} is sent but not documented`);
    }
    const contentType = (headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (!response.content) {
      if (method !== 'HEAD' && text !== '')
        problems.push(`${where}: a body of ${contentType} is sent, none is documented`);
      return problems;
    }
    // A media type range (image/*) documents each type in it, as OpenAPI has it.
    const range = contentType.replace(/\/.*/, '/*');
    const documentedType = response.content[contentType] || !response.content[range] ? contentType : range;
    const media = response.content[documentedType];
    if (!media)
      return [
        ...problems,
        `${where}: ${contentType || 'no content type'} is sent, documented: ${Object.keys(response.content).join(', ')}`,
      ];
    if (method === 'HEAD' || !media.schema) return problems;
    let value: unknown = text;
    if (/json/.test(contentType)) {
      try {
        value = JSON.parse(text);
      } catch {
        return [...problems, `${where}: the ${contentType} body is not JSON`];
      }
    }
    const validate = this.ajv.getSchema(`${DOC_ID}${pointer}/content/${pointerSegment(documentedType)}/schema`)!;
    if (!validate(value))
      problems.push(`${where}: body: ${this.ajv.errorsText(validate.errors)} in ${text.slice(0, 200)}`);
    return problems;
  }

  /** Whether the document's request schema accepts a body for METHOD path; the errors when it does not. */
  checkRequest(method: string, path: string, body: unknown): string[] {
    const template = this.template(path);
    if (!template || !this.doc.paths[template][method.toLowerCase()]?.requestBody)
      return [`${method} ${path}: no request body is documented`];
    const validate = this.ajv.getSchema(
      `${DOC_ID}#/paths/${pointerSegment(template)}/${method.toLowerCase()}/requestBody/content/application~1json/schema`,
    )!;
    return validate(body) ? [] : [this.ajv.errorsText(validate.errors)];
  }

  /** Problems of one object against a schema of components.schemas (an event of the stream). */
  checkComponent(name: string, value: unknown): string[] {
    const validate = this.ajv.getSchema(`${DOC_ID}#/components/schemas/${name}`)!;
    return validate(value)
      ? []
      : [`${name}: ${this.ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 200)}`];
  }
}

/** A JSON Pointer segment (RFC 6901) in a URI fragment. */
function pointerSegment(segment: string): string {
  return encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));
}
