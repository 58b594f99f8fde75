// stream-players.mjs: run by install.sh once azcd runs: each INPUT=DEVICE answer becomes a stream player (API calls).
// Plain Node (no build, no dependency): it runs from the source tree before or without the installed application.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const USAGE = `usage: node systemd/stream-players.mjs [--url URL | --config FILE [--service-env FILE]] [--key-file FILE] [--dry-run] INPUT=DEVICE ...
  INPUT=DEVICE  the ALSA device DEVICE (as aplay -L names it) feeds amplifier input INPUT (1-99)
  --url URL     the API's base URL (default: from the config and env files the unit starts azcd with)
  --key-file    initial-admin.txt with apiKey=...; AZC_API_KEY in the environment wins over it
  --check       only check the mappings (install.sh does, before it changes anything)
  --dry-run     print the plan without asking the daemon anything`;

/** An ALSA device name as MPD's config can carry it: hw:CARD=x,DEV=0, plughw:1,0, default, sysdefault:CARD=x. */
const DEVICE = /^[A-Za-z0-9_:=,.-]{1,256}$/;

/** "5=hw:CARD=A,DEV=0" → {channel: 5, device: 'hw:CARD=A,DEV=0'}, or an error naming the fix. */
function parseMapping(text) {
  const split = text.indexOf('=');
  const channel = Number(text.slice(0, split));
  const device = text.slice(split + 1);
  if (split < 1 || !/^[0-9]{1,2}$/.test(text.slice(0, split)) || channel < 1) {
    return { error: `'${text}' must be INPUT=DEVICE with INPUT an amplifier input 1-99, e.g. 5=hw:CARD=sndrpihifiberry,DEV=0` };
  }
  if (!DEVICE.test(device)) return { error: `'${device}' is not an ALSA device name (letters, digits and _ : = , . - as aplay -L prints them)` };
  return { channel, device };
}

/** Where the service listens, as the unit starts it: AZC_HOST / AZC_PORT in the env file win over config.json. */
function serviceUrl(configText, envText) {
  const config = configText ? JSON.parse(configText) : {};
  const env = Object.fromEntries(
    (envText ?? '').split('\n').map((line) => /^\s*(AZC_HOST|AZC_PORT)=["']?([^"'\s]*)["']?\s*$/.exec(line)).filter(Boolean).map((m) => [m[1], m[2]]),
  );
  const host = env.AZC_HOST ?? config.host ?? '0.0.0.0';
  const port = Number(env.AZC_PORT ?? config.port ?? 8080);
  // Listening on every address includes loopback: ask there, so nothing leaves the machine.
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${target}:${port}`;
}

/**
 * What to ask the daemon for each mapping, given its players: a new stream player, an output for the player already on
 * that input, nothing when it already plays there, or a reason to leave it to the dashboard.
 */
function plan(players, mappings) {
  return mappings.map(({ channel, device }) => {
    const output = { kind: 'alsa', device };
    const onInput = players.filter((p) => p.input?.channel === channel);
    if (onInput.length > 1) {
      const amps = onInput.map((p) => p.input.amplifier).join(', ');
      return { channel, skip: `several players on input ${channel} (amplifiers ${amps}): set the output of one in the dashboard` };
    }
    const [player] = onInput;
    if (!player) return { channel, method: 'POST', path: '/api/players', body: { name: `Stream player ${channel}`, input: { channel }, output } };
    if (player.output?.kind === 'alsa' && player.output.device === device) return { channel, done: `"${player.name}" already plays into ${device}` };
    return { channel, method: 'PUT', path: `/api/players/${player.id}`, body: { output } };
  });
}

async function call(base, key, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const fields = json?.errors ? ` (${JSON.stringify(json.errors)})` : '';
    throw new Error(`${method} ${path}: ${res.status} ${json?.title ?? ''}${json?.detail ? `: ${json.detail}` : ''}${fields}`);
  }
  return json;
}

function readOptional(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  }
}

async function main(argv) {
  const options = { mappings: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => argv[++i] ?? fail(`${arg} needs a value`, true);
    if (arg === '--url') options.url = value();
    else if (arg === '--config') options.config = value();
    else if (arg === '--service-env') options.envFile = value();
    else if (arg === '--key-file') options.keyFile = value();
    else if (arg === '--dry-run') options.dryRun = true;
    else if (arg === '--check') options.check = true;
    else if (arg.startsWith('-')) fail(`unknown option ${arg}`, true);
    else options.mappings.push(arg);
  }
  const mappings = options.mappings.map(parseMapping);
  const bad = mappings.find((m) => m.error);
  if (bad) fail(bad.error);
  if (mappings.length === 0) fail('no INPUT=DEVICE given', true);
  const twice = (key) => mappings.find((m, i) => mappings.findIndex((o) => o[key] === m[key]) !== i);
  if (twice('channel')) fail(`input ${twice('channel').channel} is named twice: one output per amplifier input`);
  if (twice('device')) fail(`${twice('device').device} is named twice: an output carries one stream player`);
  if (options.check) return 0;
  const base = options.url ?? serviceUrl(options.config && readOptional(options.config), options.envFile && readOptional(options.envFile));
  if (options.dryRun) {
    for (const { channel, device } of mappings) {
      console.log(`+ stream player on input ${channel}: ${base}/api/players, output ${JSON.stringify({ kind: 'alsa', device })} (POST a new player, or PUT the output of the one on that input)`);
    }
    return 0;
  }
  const keyText = options.keyFile && readOptional(options.keyFile);
  const key = process.env.AZC_API_KEY || /^apiKey=(\S+)$/m.exec(keyText ?? '')?.[1];
  if (!key) fail(`no API key: ${options.keyFile ?? 'no --key-file'} holds none; rerun with AZC_API_KEY=<an administrator's API key>`);
  const players = await call(base, key, 'GET', '/api/players');
  let failed = 0;
  for (const step of plan(players, mappings)) {
    if (step.skip || step.done) {
      console.log(`input ${step.channel}: ${step.skip ?? step.done}`);
      if (step.skip) failed++;
      continue;
    }
    try {
      const player = await call(base, key, step.method, step.path, step.body);
      console.log(`input ${step.channel}: ${step.method === 'POST' ? 'created' : 'set the output of'} "${player.name}" (${player.id}), ALSA ${step.body.output.device}`);
    } catch (err) {
      failed++;
      console.error(`input ${step.channel}: ${err.message}`);
    }
  }
  return failed ? 1 : 0;
}

function fail(message, usage = false) {
  console.error(`stream-players: ${message}${usage ? `\n${USAGE}` : ''}`);
  process.exit(2);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`stream-players: ${err.message}`);
      process.exit(1);
    },
  );
}
