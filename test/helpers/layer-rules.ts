// The layer rules of ARCHITECTURE.md as data, and a checker that applies them to the imports of a set of sources:
// which layer may import which, driver families only through the drivers' entries, domain folders only through their
// entry modules and along the capability table, uWS only in daemon/http/, SQLite and SQL only in daemon/store/.
import path from 'node:path';
import ts from 'typescript';

/** The parts of the tree, by path (first match wins); a file under none of them is a finding too. */
const LAYERS: Array<[layer: Layer, test: RegExp]> = [
  ['driver-entry', /^drivers\/(index|driver|playback)\.ts$/],
  ['drivers', /^drivers\//],
  ['native', /^native\//],
  ['store', /^daemon\/store\//],
  ['domain', /^daemon\/domain\//],
  ['http', /^daemon\/http\//],
  ['api', /^daemon\/api\//],
  ['mqtt', /^daemon\/mqtt\//],
  ['discovery', /^daemon\/discovery\//],
  ['root', /^daemon\/(app|compose|main)\.ts$/],
  ['process', /^daemon\/(lifecycle|systemd)\.ts$/],
  ['base', /^daemon\/(config|log|paths|names|ids|runtime)\.ts$|^daemon\/config\//],
];

export type Layer =
  | 'driver-entry'
  | 'drivers'
  | 'native'
  | 'store'
  | 'domain'
  | 'http'
  | 'api'
  | 'mqtt'
  | 'discovery'
  | 'root'
  | 'process'
  | 'base';

/** What each layer may import, besides itself (ARCHITECTURE.md, "Layers"). Node and npm packages are not listed. */
export const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  'driver-entry': ['drivers'],
  drivers: ['driver-entry'],
  native: [],
  base: ['driver-entry'],
  store: ['base'],
  domain: ['base', 'store', 'driver-entry'],
  http: ['base', 'domain'],
  api: ['base', 'domain', 'http'],
  mqtt: ['base', 'domain'],
  discovery: ['base'],
  process: ['base', 'native', 'domain'],
  root: ['base', 'store', 'domain', 'http', 'api', 'mqtt', 'discovery', 'process', 'native', 'driver-entry'],
};

/** Imports the store may make of the domain: types only, and only these names (a repository stores them). */
export const STORE_MAY_USE_TYPES: Record<string, readonly string[]> = {
  'daemon/domain/shared/index.ts': ['Role'],
};

/** Which domain folder may import which (through its index.ts), besides shared/, which every folder may import. */
export const CAPABILITIES: Record<string, readonly string[]> = {
  shared: [],
  accounts: [],
  audio: [],
  playlists: [],
  scenes: ['audio'],
  settings: ['accounts'],
  backup: ['accounts', 'audio'],
  playback: ['audio', 'playlists'],
};

const UWS_PACKAGES = ['@trufflesuite/uws-js-unofficial', '@btc-vision/uwebsockets.js', 'uWebSockets.js'];
const SQLITE_PACKAGE = 'better-sqlite3';
/** Statement text: an SQL keyword in capitals at the start of a string, as every statement of the store is written. */
const SQL_TEXT =
  /^\s*(SELECT\s|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|UNIQUE)|DROP\s+(TABLE|INDEX)|ALTER\s+TABLE|PRAGMA\s|BEGIN\b|COMMIT\b|ROLLBACK\b|VACUUM\b)/;

export interface ImportEdge {
  from: string;
  /** Repository-relative path of a project file, or the package name as written. */
  to: string;
  typeOnly: boolean;
  names: string[];
  line: number;
}

export interface Scanned {
  imports: ImportEdge[];
  /** String literals that name a uWS or SQLite package, or hold SQL text, with their lines. */
  strings: Array<{ text: string; line: number }>;
  /** Calls of .prepare() or .pragma() (SQLite's statement API), with their lines. */
  sqliteCalls: number[];
}

/** Reads the imports (`import`, `export … from`, `import()`, `require()`) and the telling strings of one source. */
export function scan(file: string, source: string): Scanned {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const result: Scanned = { imports: [], strings: [], sqliteCalls: [] };
  const lineOf = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  /** Specifiers are imports, not strings that name a package. */
  const specifiers = new Set<ts.Node>();
  const add = (specifier: ts.StringLiteral, node: ts.Node, typeOnly: boolean, names: string[]) => {
    specifiers.add(specifier);
    result.imports.push({ from: file, to: resolve(file, specifier.text), typeOnly, names, line: lineOf(node) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named =
        clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const allTypes =
        clause?.isTypeOnly === true ||
        (named !== undefined && named.length > 0 && !clause?.name && named.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier, node, allTypes, named ? named.map((e) => (e.propertyName ?? e.name).text) : []);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(
        node.moduleSpecifier,
        node,
        node.isTypeOnly,
        named ? named.map((e) => (e.propertyName ?? e.name).text) : ['*'],
      );
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require'))
        add(node.arguments[0] as ts.StringLiteral, node, false, ['*']);
    }
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ['prepare', 'pragma'].includes(node.expression.name.text)
    ) {
      result.sqliteCalls.push(lineOf(node));
    }
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) &&
      !specifiers.has(node)
    ) {
      const text = node.text;
      if (SQL_TEXT.test(text) || packageOf(text) !== undefined) result.strings.push({ text, line: lineOf(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return result;
}

/** A relative specifier as a repository path of the TypeScript file it names; a package name as it is. */
function resolve(from: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  return target.replace(/\.js$/, '.ts');
}

/** The uWS or SQLite package a string names (alone or as a path inside it), if any. */
function packageOf(text: string): string | undefined {
  return [...UWS_PACKAGES, SQLITE_PACKAGE].find((pkg) => text === pkg || text.startsWith(`${pkg}/`));
}

export function layerOf(file: string): Layer | undefined {
  return LAYERS.find(([, test]) => test.test(file))?.[0];
}

/** The domain folder of a file under daemon/domain/, e.g. `audio`. */
const capabilityOf = (file: string): string | undefined => /^daemon\/domain\/([^/]+)\//.exec(file)?.[1];

/** Every rule broken by the sources given (repository path → text), one line each: `from:line → to: why`. */
export function checkLayers(sources: ReadonlyMap<string, string>): string[] {
  const findings: string[] = [];
  for (const [file, source] of sources) {
    const from = layerOf(file);
    if (!from) {
      findings.push(`${file}: belongs to no layer; place it in one (ARCHITECTURE.md) and add it to LAYERS`);
      continue;
    }
    const scanned = scan(file, source);
    for (const edge of scanned.imports) {
      const why = arrowProblem(edge, from);
      if (why) findings.push(`${file}:${edge.line} → ${edge.to}: ${why}`);
    }
    for (const { text, line } of scanned.strings) {
      const pkg = packageOf(text);
      if (pkg && UWS_PACKAGES.includes(pkg) && from !== 'http')
        findings.push(`${file}:${line}: names ${pkg}; only daemon/http/ touches uWS`);
      if (pkg === SQLITE_PACKAGE && from !== 'store')
        findings.push(`${file}:${line}: names ${pkg}; only daemon/store/ opens SQLite`);
      if (!pkg && from !== 'store')
        findings.push(`${file}:${line}: SQL text "${text.trim().slice(0, 30)}…"; SQL lives in daemon/store/ only`);
    }
    if (from !== 'store' && from !== 'drivers' && from !== 'driver-entry') {
      for (const line of scanned.sqliteCalls)
        findings.push(`${file}:${line}: calls prepare()/pragma(); statements live in daemon/store/ only`);
    }
  }
  return findings;
}

/** Why one import breaks a rule, or undefined when it keeps them. */
function arrowProblem(edge: ImportEdge, from: Layer): string | undefined {
  const pkg = packageOf(edge.to);
  if (pkg && UWS_PACKAGES.includes(pkg)) return from === 'http' ? undefined : 'only daemon/http/ imports uWS';
  if (pkg === SQLITE_PACKAGE) return from === 'store' ? undefined : 'only daemon/store/ imports better-sqlite3';
  if (!edge.to.startsWith('daemon/') && !edge.to.startsWith('drivers/') && !edge.to.startsWith('native/'))
    return undefined;
  const to = layerOf(edge.to);
  if (!to) return 'imports a file that belongs to no layer';
  if (from === 'drivers' || from === 'driver-entry') {
    return edge.to.startsWith('daemon/')
      ? 'drivers/ never imports daemon/: the daemon sees the drivers, not the other way round'
      : undefined;
  }
  if (to === 'drivers') return 'daemon/ reaches drivers/ only through drivers/index.ts, driver.ts and playback.ts';
  if (from === 'store' && to === 'domain') return storeToDomain(edge);
  if (to !== from && !MAY_IMPORT[from].includes(to))
    return `${from} may not import ${to} (it may import ${[from, ...MAY_IMPORT[from]].join(', ')})`;
  if (to === 'domain') return domainArrow(edge);
  return undefined;
}

function storeToDomain(edge: ImportEdge): string | undefined {
  const allowed = STORE_MAY_USE_TYPES[edge.to];
  if (allowed && edge.typeOnly && edge.names.every((name) => allowed.includes(name))) return undefined;
  return `the store may import from the domain only the types named in ARCHITECTURE.md (${Object.entries(
    STORE_MAY_USE_TYPES,
  )
    .map(([file, names]) => `${names.join(', ')} from ${file}`)
    .join('; ')}), type-only`;
}

/** Domain folders are entered through their index.ts, and one folder uses another only as the capability table says. */
function domainArrow(edge: ImportEdge): string | undefined {
  const target = capabilityOf(edge.to);
  const source = capabilityOf(edge.from);
  if (target === undefined) return 'daemon/domain/ holds folders only';
  if (source === target) return undefined;
  if (!edge.to.endsWith(`/domain/${target}/index.ts`)) return `enter domain/${target}/ through its index.ts`;
  if (source === undefined) return undefined;
  if (!(source in CAPABILITIES))
    return `domain/${source}/ is not in the capability table: add it to ARCHITECTURE.md and CAPABILITIES`;
  if (!(target in CAPABILITIES))
    return `domain/${target}/ is not in the capability table: add it to ARCHITECTURE.md and CAPABILITIES`;
  if (target === 'shared' || CAPABILITIES[source]!.includes(target)) return undefined;
  return `domain/${source}/ may import domain/shared/${CAPABILITIES[source]!.map((c) => ` and domain/${c}/`).join('')} only`;
}
