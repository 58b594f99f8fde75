// The dashboard's files without a browser: size budget, CSP-safe markup, resolvable imports, how azcd serves them.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import ts from 'typescript';
import { servedBytes } from '../../daemon/http/static.js';
import { UI_DIR } from '../../daemon/paths.js';
import { startTestDaemon } from '../helpers/daemon.js';

/**
 * The whole app, gzipped as azcd serves it (level 9, file by file), must stay under this: 80 KB since the dashboard
 * says refusals in its own words, picks sounds from the library and lists free outputs (72 KB since stream players,
 * 60 KB before them).
 */
const BUDGET_BYTES = 80 * 1024;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? files(file) : [file];
  });
}

const all = files(UI_DIR);
const text = (file: string) => readFileSync(file, 'utf8');
const rel = (file: string) => path.relative(UI_DIR, file);

/** Type declarations for the dashboard's type check (tsconfig.ui.json): azcd never serves them, browsers never load them. */
const served = all.filter((file) => !file.endsWith('.d.ts'));

t.test('the whole dashboard is at most 80 KB gzipped', async (t) => {
  let raw = 0;
  let gzipped = 0;
  for (const file of served) {
    const body = servedBytes(file, readFileSync(file));
    raw += body.length;
    gzipped += gzipSync(body, { level: 9 }).length;
  }
  t.comment(`daemon/ui: ${served.length} files, ${raw} bytes raw, ${gzipped} bytes gzipped (budget ${BUDGET_BYTES})`);
  t.ok(gzipped <= BUDGET_BYTES, `${gzipped} bytes gzipped`);
});

t.test('scripts and styles are served without their comment lines, and nothing else of them changes', async (t) => {
  const scripts = served.filter((file) => file.endsWith('.js'));
  // Compiled with every comment removed, the file as served and the source give the same program.
  const program = (text: string) =>
    ts.transpileModule(text, { compilerOptions: { removeComments: true, target: ts.ScriptTarget.ESNext } }).outputText;
  let saved = 0;
  for (const file of [...scripts, ...served.filter((file) => file.endsWith('.css'))]) {
    const source = readFileSync(file, 'utf8');
    const sent = servedBytes(file, Buffer.from(source)).toString('utf8');
    saved += source.length - sent.length;
    t.notMatch(sent, /^\s*\/\//m, `${rel(file)}: no comment line left`);
    if (file.endsWith('.js')) t.equal(program(sent), program(source), `${rel(file)}: the same program`);
  }
  t.ok(saved > 0, `${saved} bytes of comment lines left out`);
});

t.test('index.html has nothing the CSP would block: no inline script, style or handler', async (t) => {
  const html = text(path.join(UI_DIR, 'index.html'));
  t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/i, 'every <script> has a src');
  t.notMatch(html, /<style[\s>]/i, 'no <style> block');
  t.notMatch(html, /\sstyle\s*=/i, 'no style attribute');
  t.notMatch(html, /\son[a-z]+\s*=/i, 'no inline event handler');
  for (const [, ref] of html.matchAll(/\s(?:href|src)="([^"#:]+)"/g)) {
    t.ok(existsSync(path.join(UI_DIR, ref!)), `${ref} exists`);
  }
});

t.test('scripts never set inline styles as attributes nor evaluate strings', async (t) => {
  for (const file of all.filter((f) => f.endsWith('.js'))) {
    const source = text(file);
    t.notMatch(
      source,
      /setAttribute\(\s*['"]style['"]|\.style\.cssText|\beval\(|new Function\(/,
      `${rel(file)} is CSP-clean`,
    );
    t.notMatch(
      source,
      /localStorage|[?&]apiKey=|[?&]token=/,
      `${rel(file)} keeps credentials out of URLs and localStorage`,
    );
    for (const [, spec] of source.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)) {
      t.ok(existsSync(path.resolve(path.dirname(file), spec!)), `${rel(file)} imports ${spec}, which exists`);
    }
  }
});

t.test('azcd serves the dashboard with a strict CSP, gzip and revalidation', async (t) => {
  const d = await startTestDaemon(t);
  const page = await fetch(`${d.base}/`, { headers: { 'accept-encoding': 'gzip' } });
  t.equal(page.status, 200);
  t.match(page.headers.get('content-security-policy'), /default-src 'self'.*style-src 'self'.*script-src 'self'/);
  t.equal(page.headers.get('cache-control'), 'no-cache');
  t.equal(page.headers.get('content-encoding'), 'gzip');
  t.match(await page.text(), /<script type="module" src="app.js"><\/script>/);
  const etag = page.headers.get('etag')!;
  const again = await fetch(`${d.base}/`, { headers: { 'if-none-match': etag } });
  t.equal(again.status, 304, 'an unchanged page is revalidated by ETag');
  for (const asset of ['/app.js', '/style.css', '/css/views.css', '/js/stream.js', '/icon.svg']) {
    const res = await fetch(`${d.base}${asset}`);
    t.equal(res.status, 200, `${asset} is served`);
    await res.arrayBuffer();
  }
  for (const declarations of all.filter((file) => file.endsWith('.d.ts'))) {
    const res = await fetch(`${d.base}/${rel(declarations)}`);
    t.equal(res.status, 404, `${rel(declarations)} is not served (types for the type check only)`);
    await res.arrayBuffer();
  }
});
