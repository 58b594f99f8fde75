// Test processes load this first (package.json "tap" node-arg): tsx is registered only for a TypeScript entry point,
// so `tap test/x.test.ts` runs the sources, while `npm test` runs their bundles (.test-build/, see
// scripts/build-tests.mjs) without paying for the TypeScript loader in each of its ~100 processes.
if (/\.[cm]?tsx?$/.test(process.argv[1] ?? '')) await import('tsx');
