// Preloaded into a child daemon (`node --import`): registers module-watch-hooks.mjs, which appends to the file named
// by MODULE_WATCH_FILE one line for each module loaded whose source declares a class named in MODULE_WATCH_CLASSES
// (`<class> <url>`), and one for each CommonJS module of a package named in MODULE_WATCH_PACKAGES that is imported
// through the ES module loader rather than required (`import <package> <url>`); both lists comma-separated. A class
// name is found in the sources, under tsx, and in the bundles alike.
import { register } from 'node:module';

const list = (name) => (process.env[name] ?? '').split(',').filter(Boolean);

register('./module-watch-hooks.mjs', import.meta.url, {
  data: {
    file: process.env.MODULE_WATCH_FILE,
    names: list('MODULE_WATCH_CLASSES'),
    packages: list('MODULE_WATCH_PACKAGES'),
  },
});
