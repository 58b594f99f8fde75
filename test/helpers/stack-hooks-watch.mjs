// Preloaded into a child daemon (`node --import`): when the process exits, writes to STACK_HOOKS_FILE whether
// `Error.prepareStackTrace` and `process.emit` are still what they were when it started (`kept`) or not (`replaced`),
// e.g. `prepareStackTrace=kept emit=kept`.
import { writeFileSync } from 'node:fs';

const { prepareStackTrace } = Error;
const { emit } = process;

process.on('exit', () => {
  const state = (same) => (same ? 'kept' : 'replaced');
  writeFileSync(
    process.env.STACK_HOOKS_FILE,
    `prepareStackTrace=${state(Error.prepareStackTrace === prepareStackTrace)} emit=${state(process.emit === emit)}\n`,
  );
});
