// Starts the built daemon on loopback, checks its API and event stream, measures idle RSS, stops it; plain JS so it
// runs inside the throw-away roots of scripts/test-platforms.sh with only Node and the installed node_modules.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Generous: under qemu-user the first start compiles SQLite's schema and loads uWS at emulated speed. */
const START_WAIT_MS = 180_000;
/** How long the daemon sits untouched before its resident set is read: past start-up garbage, into idle. */
const IDLE_MS = Number(process.env.AZC_SMOKE_IDLE_MS ?? 15_000);

const stateDir = mkdtempSync(path.join(tmpdir(), 'azc-smoke-'));
const child = spawn(
  process.execPath,
  [
    path.join(ROOT, 'dist/daemon/main.js'),
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--state-dir',
    stateDir,
    '--no-ssdp',
    '--log-level',
    'info',
  ],
  {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let out = '';
let err = '';
child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

function fail(message) {
  process.stderr.write(
    `platform-smoke: FAIL: ${message}\n--- daemon stdout ---\n${out}\n--- daemon stderr ---\n${err}\n`,
  );
  child.kill('SIGKILL');
  rmSync(stateDir, { recursive: true, force: true });
  process.exit(1);
}

function waitForOutput(re, ms) {
  return new Promise((resolve) => {
    let found = false;
    const timer = setTimeout(() => fail(`no ${re} on stdout within ${ms} ms`), ms);
    const check = () => {
      const m = re.exec(out);
      if (m && !found) {
        found = true;
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(m);
      }
    };
    child.stdout.on('data', check);
    void exited.then(
      ({ code, signal }) => found || fail(`daemon exited (code ${code}, signal ${signal}) before printing ${re}`),
    );
    check();
  });
}

const started = Date.now();
const [, base] = await waitForOutput(/listening on (http:\/\/127\.0\.0\.1:\d+)/, START_WAIT_MS);
const [, apiKey] = await waitForOutput(/API key:\s+(\S+)/, START_WAIT_MS);
const startMs = Date.now() - started;

async function call(method, url, body) {
  const res = await fetch(base + url, {
    method,
    headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return {
    status: res.status,
    json: text && /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text,
  };
}

const health = await call('GET', '/api/health');
if (health.status !== 200) fail(`/api/health answered ${health.status}`);
const zones = await call('GET', '/api/zones');
if (zones.status !== 200 || !Array.isArray(zones.json) || zones.json.length === 0)
  fail(`/api/zones answered ${zones.status} ${JSON.stringify(zones.json)}`);
const zone = zones.json[0];

// The event stream must carry the volume change made after it opened.
const stream = await fetch(`${base}/api/stream/events`, {
  headers: { 'x-api-key': apiKey, accept: 'text/event-stream' },
});
if (stream.status !== 200) fail(`/api/stream/events answered ${stream.status}`);
const reader = stream.body.pipeThrough(new TextDecoderStream()).getReader();
const target = zone.volume === 0.25 ? 0.5 : 0.25; // volumes are 0..1
let seen = '';
const sawEvent = (async () => {
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    seen += value;
    for (const line of seen.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const event = JSON.parse(line.slice(6));
      // The amplifier may round to its own steps: the zone is what must match.
      if (event.type === 'zone.volumeChanged' && event.payload?.zoneId === zone.id) return true;
    }
  }
})();
await reader.read().then(({ value }) => (seen += value ?? '')); // the `retry:` preamble: the stream is open
const put = await call('PUT', `/api/zones/${zone.id}/volume`, { volume: target });
if (put.status >= 300) fail(`PUT /api/zones/{id}/volume answered ${put.status} ${JSON.stringify(put.json)}`);
if (!(await sawEvent)) fail(`the event stream ended without zone.volumeChanged; it carried:\n${seen}`);
await reader.cancel();

await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);

child.kill('SIGTERM');
const { code, signal } = await exited;
rmSync(stateDir, { recursive: true, force: true });
if (code !== 0) fail(`daemon stopped with code ${code}, signal ${signal}`);

const uws = /"uws":"([^"]+)"/.exec(out)?.[1] ?? 'unknown'; // pino writes the start line asynchronously
const result = {
  node: process.version,
  arch: process.arch,
  uws,
  startMs,
  idleRssMiB: Math.round((rssKb / 1024) * 10) / 10,
  zones: zones.json.length,
};
process.stdout.write(`platform-smoke: PASS ${JSON.stringify(result)}\n`);
