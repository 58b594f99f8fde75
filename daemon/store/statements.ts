// Prepared statements made on first use. Each prepared statement holds ~6 KB of SQLite's memory; an appliance that
// never edits a scene, opens a playlist or switches a receiver never pays for theirs (ARCHITECTURE.md, "Memory").
// A statement is prepared the first time its property is read. better-sqlite3 refuses to prepare while the connection
// is busy iterating, and no code here iterates (`.iterate()`): every read is `.get()` or `.all()`.

/** An object whose property `name` is `factories[name]()`, called the first time that property is read. */
export function preparedOnUse<T extends Record<string, () => unknown>>(
  factories: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const statements = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const [name, prepare] of Object.entries(factories)) {
    let statement: unknown;
    Object.defineProperty(statements, name, {
      enumerable: true,
      get: () => {
        statement ??= prepare();
        return statement;
      },
    });
  }
  return statements;
}
