// `npm run docs:config`: rewrites the settings part of docs/configuration.md from the schemas (daemon/config/reference.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withSettingsReference } from '../daemon/config/reference.js';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'configuration.md');
const before = readFileSync(file, 'utf8');
const after = withSettingsReference(before);
if (after === before) process.stdout.write(`${path.relative(process.cwd(), file)} is up to date\n`);
else {
  writeFileSync(file, after);
  process.stdout.write(`${path.relative(process.cwd(), file)} rewritten from the schemas\n`);
}
