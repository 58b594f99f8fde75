// Checks an installed azcd from outside: health names the amplifier's driver online, and the first admin's API key
// from initial-admin.txt lists the amplifier's zones. Plain JS with no dependencies, for scripts/test-install.sh.
//
// usage: node scripts/install-smoke.mjs --base http://127.0.0.1:PORT --driver monoprice --zones 6
//          [--credentials FILE] [--wait-s 60]
// Prints `install-smoke: PASS {...}` and exits 0, or `install-smoke: FAIL: why` and exits 1.
import { readFileSync } from 'node:fs';

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

const base = arg('--base');
const driver = arg('--driver', 'monoprice');
const zoneCount = Number(arg('--zones', '6'));
const credentials = arg('--credentials');
/** A driver opens its port and reads every zone after READY=1: health may say offline for the first moments. */
const waitMs = Number(arg('--wait-s', '60')) * 1000;
/** One request must never hang the proof: the daemon answers in milliseconds when it is up at all. */
const REQUEST_TIMEOUT_MS = 10_000;

function fail(message) {
  process.stdout.write(`install-smoke: FAIL: ${message}\n`);
  process.exit(1);
}

async function get(path, headers = {}) {
  const res = await fetch(base + path, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

if (!base) fail('--base URL is required');

// Health: the configured driver online. Polled (bounded): the link comes up just after start.
const deadline = Date.now() + waitMs;
let health;
for (;;) {
  try {
    health = await get('/api/health');
  } catch (err) {
    health = { status: 0, json: String(err.cause?.code ?? err.message) };
  }
  const amp = health.status === 200 ? health.json.amplifiers?.find((a) => a.driver === driver) : undefined;
  if (amp?.online && health.json.status === 'ok') break;
  if (Date.now() > deadline) {
    fail(
      `/api/health did not report the ${driver} driver online within ${waitMs / 1000} s: ${health.status} ${JSON.stringify(health.json)}`,
    );
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}

const result = {
  health: { status: health.json.status, amplifiers: health.json.amplifiers, version: health.json.version },
};

if (credentials) {
  let text;
  try {
    text = readFileSync(credentials, 'utf8');
  } catch (err) {
    fail(`cannot read the first admin's credentials at ${credentials}: ${err.message}`);
  }
  const apiKey = /^apiKey=(\S+)$/m.exec(text)?.[1];
  const username = /^username=(\S+)$/m.exec(text)?.[1];
  if (!apiKey || !username || !/^password=\S+$/m.test(text))
    fail(`${credentials} has no username, password and apiKey lines`);

  const anonymous = await get('/api/zones');
  if (anonymous.status !== 401) fail(`/api/zones without a key answered ${anonymous.status}, not 401`);
  const zones = await get('/api/zones', { 'x-api-key': apiKey });
  if (zones.status !== 200 || !Array.isArray(zones.json))
    fail(`/api/zones with the first admin's key answered ${zones.status} ${JSON.stringify(zones.json)}`);
  if (zones.json.length !== zoneCount)
    fail(`/api/zones listed ${zones.json.length} zones, the emulated amplifier has ${zoneCount}`);
  result.admin = username;
  result.zones = zones.json.map((z) => z.name ?? z.id);
}

process.stdout.write(`install-smoke: PASS ${JSON.stringify(result)}\n`);
