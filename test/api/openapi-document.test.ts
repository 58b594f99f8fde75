// The OpenAPI document as a client generator reads it: every schema compiles under ajv's defaults (strict, with the
// standard formats only), paging parameters are integers with their bounds, and every component is used by an operation.

import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import t from 'tap';
import { startTestDaemon } from '../helpers/daemon.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
type Json = Record<string, unknown>;

/** Every schema object in the document, with where it is (request bodies, parameters, responses, components). */
function schemasOf(document: Json): Array<[string, Json]> {
  const found: Array<[string, Json]> = [];
  for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${template}`;
      for (const parameter of (operation.parameters ?? []) as Json[])
        found.push([`${where} parameter ${String(parameter.name)}`, parameter.schema as Json]);
      const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      for (const [type, media] of Object.entries(body ?? {}))
        found.push([`${where} body ${type}`, media.schema as Json]);
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
          if (media.schema) found.push([`${where} ${status} ${type}`, media.schema as Json]);
        }
      }
    }
  }
  for (const [name, schema] of Object.entries((document.components as Json).schemas as Record<string, Json>))
    found.push([`components ${name}`, schema]);
  return found;
}

t.test('the OpenAPI document, read by a strict client', async (t) => {
  const d = await startTestDaemon(t);
  const document = (await (await fetch(`${d.base}/api/openapi.json`)).json()) as Json;

  t.test("every schema compiles with ajv's defaults and the standard formats", async (t) => {
    const ajv = new Ajv2020();
    addFormats(ajv);
    // OpenAPI's own numeric formats (registered by every OpenAPI tool).
    for (const format of ['double', 'float', 'int32', 'int64']) ajv.addFormat(format, true);
    // The document's components as one schema their $refs resolve in ("components" is its container, not a keyword).
    ajv.addKeyword('components');
    ajv.addSchema({ components: document.components, $id: 'doc' });
    const failures: string[] = [];
    for (const [where, schema] of schemasOf(document)) {
      try {
        ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
      } catch (error) {
        failures.push(`${where}: ${(error as Error).message}`);
      }
    }
    t.same(failures, [], 'no schema is refused');
  });

  t.test('a name checks with the document alone: its rule is a pattern, not a private format', async (t) => {
    const ajv = new Ajv2020();
    addFormats(ajv);
    const item = (document.paths as Record<string, Record<string, Json>>)['/api/players']!.post!;
    const body = ((item.requestBody as Json).content as Record<string, Json>)['application/json']!.schema as Json;
    const name = (body.properties as Record<string, Json>).name!;
    const check = ajv.compile(name);
    t.ok(check('Living room'), 'a plain name passes');
    t.notOk(check('evil\u202etxt.exe'), 'a bidirectional override is refused');
    t.notOk(check('two\nlines'), 'a line break is refused');
  });

  t.test('paging parameters are integers with their bounds', async (t) => {
    const parameters = ((document.paths as Record<string, Record<string, Json>>)['/api/playlists']!.get!.parameters ??
      []) as Json[];
    const schema = (name: string) => parameters.find((p) => p.name === name)?.schema as Json | undefined;
    t.match(schema('limit'), { type: 'integer', minimum: 1, maximum: 200 }, 'limit: 1 to the configured maximum');
    t.match(schema('offset'), { type: 'integer', minimum: 0 }, 'offset: from 0');
  });

  t.test('every component schema is used by an operation', async (t) => {
    const text = JSON.stringify(document.paths);
    const unused = Object.keys((document.components as Json).schemas as Json).filter(
      (name) => !text.includes(`"#/components/schemas/${name}"`),
    );
    t.same(unused, [], 'each is referenced from a path');
  });
});
