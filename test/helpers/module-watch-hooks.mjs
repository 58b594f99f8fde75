// Loader hooks of test/helpers/module-watch.mjs: a module is written down before it runs, so a class that is loaded
// at start-up is in the file before the daemon listens. require() does not pass through these hooks (node 20).
import { appendFileSync } from 'node:fs';

let file = '';
let watched = [];
let packages = [];

export function initialize(data) {
  file = data.file;
  // `class Name` as written, `Name = class` as a bundle minified for syntax has it; a digit after a renamed one.
  watched = data.names.map((name) => [name, new RegExp(`\\bclass ${name}\\d*\\b|\\b${name}\\d*\\s*=\\s*class\\b`)]);
  packages = data.packages;
}

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  for (const name of packages)
    if (loaded.format === 'commonjs' && url.includes(`/node_modules/${name}/`))
      appendFileSync(file, `import ${name} ${url}\n`);
  if (loaded.source == null) return loaded;
  const text = typeof loaded.source === 'string' ? loaded.source : Buffer.from(loaded.source).toString('utf8');
  for (const [name, declared] of watched) if (declared.test(text)) appendFileSync(file, `${name} ${url}\n`);
  return loaded;
}
