// Runs test/bench/monoprice-drag.ts (written by the driver's owner) in its own process and reports its result.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR } from './processes.js';

export const MONOPRICE_DRAG = path.join(BENCH_DIR, 'monoprice-drag.ts');

process.once('message', async () => {
  try {
    if (!existsSync(MONOPRICE_DRAG)) {
      process.send?.({ type: 'result', missing: 'test/bench/monoprice-drag.ts does not exist' });
      return;
    }
    // A variable specifier: this file must type-check whether or not the drag benchmark exists.
    const specifier = pathToFileURL(MONOPRICE_DRAG).href;
    const mod = (await import(specifier)) as { benchMonopriceDrag?: () => Promise<unknown> };
    if (typeof mod.benchMonopriceDrag !== 'function') {
      process.send?.({ type: 'result', missing: 'monoprice-drag.ts does not export benchMonopriceDrag()' });
      return;
    }
    const result = await mod.benchMonopriceDrag();
    process.send?.({ type: 'result', result });
  } catch (err) {
    process.send?.({ type: 'error', message: (err as Error).stack ?? String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
