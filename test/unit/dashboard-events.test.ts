// The events the dashboard's store handles against the one definition of the events the daemon sends: its handling is
// typed by the generated event types (daemon/ui/schemas.d.ts), and the type check fails when it misses a type.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { DomainEventSchema } from '../../daemon/domain/shared/events.js';
import { UI_DIR } from '../../daemon/paths.js';
import { ROOT } from '../helpers/paths.js';

const sent: string[] = DomainEventSchema.anyOf.map((e) => (e.properties.type as { const: string }).const);
const STORE = path.join(UI_DIR, 'js', 'store.js');

/** The dashboard's program as tsconfig.ui.json makes it, with store.js replaced by `store` when given. */
function program(store?: string, oldProgram?: ts.Program): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.ui.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const host = ts.createCompilerHost(config.options);
  const read = host.readFile.bind(host);
  host.readFile = (file) => (store !== undefined && path.resolve(file) === STORE ? store : read(file));
  return ts.createProgram({ rootNames: config.fileNames, options: config.options, host, oldProgram });
}

/** What the type check says about store.js, one message a line. */
function storeErrors(p: ts.Program): string[] {
  return ts
    .getPreEmitDiagnostics(p, p.getSourceFile(STORE))
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
}

/** The call the store's `apply` makes for a type it has no case for. */
function unknownEventCall(source: ts.SourceFile): ts.CallExpression {
  let found: ts.CallExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.getText(source) === 'unknownEvent') found = node;
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!found) throw new Error('store.js has no unknownEvent(type) call in apply');
  return found;
}

const real = program();

t.test('the store applies exactly the event types of the schema, each in its own case', async (t) => {
  const checker = real.getTypeChecker();
  const source = real.getSourceFile(STORE)!;
  const call = unknownEventCall(source);
  const parameter = checker.getTypeAtLocation(call.arguments[0]!);
  t.ok(parameter.flags & ts.TypeFlags.Never, 'no type of the schema reaches the default branch');
  t.same(storeErrors(real), [], 'store.js type-checks');
  const apply = source.statements.find(
    (s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'apply',
  )!;
  const event = checker.getTypeAtLocation(apply.parameters[0]!);
  const types = event.isUnion() ? event.types : [event];
  const typed = types.map((member) => {
    const literal = checker.getTypeOfSymbolAtLocation(member.getProperty('type')!, apply);
    return literal.isStringLiteral() ? literal.value : checker.typeToString(literal);
  });
  t.same(typed.sort(), [...sent].sort(), "apply takes the generated DomainEvent: the schema's types, no more, no less");
});

t.test('the type check fails when the store misses a type of the event schema, naming it', async (t) => {
  const store = readFileSync(STORE, 'utf8');
  const label = "    case 'library.scanChanged':\n";
  t.ok(store.includes(label), 'store.js has a case for library.scanChanged');
  const errors = storeErrors(program(store.replace(label, ''), real));
  t.match(errors, [/"library\.scanChanged"' is not assignable to parameter of type 'never'/]);
});
