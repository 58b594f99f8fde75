// A small path router: static segments win over `{param}` segments; reports allowed methods for 405.

export interface Match<R> {
  route: R;
  params: Record<string, string>;
}

export type RouteLookup<R> =
  | { kind: 'found'; match: Match<R> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

interface Node<R> {
  statics: Map<string, Node<R>>;
  param?: { name: string; node: Node<R> };
  routes: Map<string, R>;
}

const newNode = <R>(): Node<R> => ({ statics: new Map(), routes: new Map() });

/** How many paths with parameters the router remembers (then it starts over): bounded whatever clients send. */
const RECENT_PATHS = 512;

export class Router<R> {
  private readonly root: Node<R> = newNode();
  /** Templates without parameters, by path: most requests are answered without splitting the path at all. */
  private readonly exact = new Map<string, Map<string, R>>();
  /** Paths with parameters matched lately, with their parameters: a client repeats its paths (a slider's PUTs). */
  private readonly recent = new Map<string, { routes: Map<string, R>; params: Readonly<Record<string, string>> }>();

  /** Registers `route` for `method` on a template such as `/api/players/{id}/volume`. */
  add(method: string, template: string, route: R): void {
    this.recent.clear();
    let node = this.root;
    for (const segment of split(template)) {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) {
        if (node.param && node.param.name !== param[1]) {
          throw new Error(`conflicting parameter names at ${template}: {${node.param.name}} vs ${segment}`);
        }
        node.param ??= { name: param[1]!, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(method)) throw new Error(`duplicate route ${method} ${template}`);
    node.routes.set(method, route);
    if (!template.includes('{')) this.exact.set(template, node.routes);
  }

  find(method: string, path: string): RouteLookup<R> {
    // A static template matches its path exactly (static segments win over parameters, so nothing else could).
    const exact = this.exact.get(path);
    if (exact) {
      const route = exact.get(method);
      if (route === undefined) return { kind: 'method-not-allowed', allow: [...exact.keys()] };
      return { kind: 'found', match: { route, params: {} } };
    }
    let known = this.recent.get(path);
    if (!known) {
      const params: Record<string, string> = {};
      const node = this.walk(this.root, split(path), 0, params);
      if (!node || node.routes.size === 0) return { kind: 'not-found' };
      known = { routes: node.routes, params };
      if (this.recent.size >= RECENT_PATHS) this.recent.clear();
      this.recent.set(path, known);
    }
    const route = known.routes.get(method);
    if (route === undefined) return { kind: 'method-not-allowed', allow: [...known.routes.keys()] };
    // A copy: the caller may rewrite its parameters (ids are lower-cased).
    return { kind: 'found', match: { route, params: { ...known.params } } };
  }

  private walk(node: Node<R>, segments: string[], index: number, params: Record<string, string>): Node<R> | undefined {
    if (index === segments.length) return node;
    const segment = segments[index]!;
    const exact = node.statics.get(segment);
    if (exact) {
      const found = this.walk(exact, segments, index + 1, params);
      if (found && found.routes.size > 0) return found;
    }
    if (node.param && segment !== '') {
      const found = this.walk(node.param.node, segments, index + 1, params);
      if (found && found.routes.size > 0) {
        params[node.param.name] = safeDecode(segment);
        return found;
      }
    }
    return undefined;
  }
}

function split(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
