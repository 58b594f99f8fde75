// What the daemon takes from node's runtime other than the way node offers it: the monotonic clock, read from
// process.hrtime() rather than the `performance` global, which loads perf_hooks (ARCHITECTURE.md, "Memory"). Any layer
// of daemon/ may use it; drivers/ take it from drivers/core/clock.ts.
export { monotonicMs } from '../drivers/index.js';
