// An idle appliance should sleep: system calls, wake-ups and processes of the built daemon with no client at all, as
// `npm start` runs it and as the installed service runs it (SSDP, mDNS, systemd watchdog), against bare uWS; and
// its resident memory once start-up is over, against the appliance's budget (< 60 MB with no stream player).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Receiver } from '../helpers/notify-receiver.js';
import { type AzcdProcess, runAzcd } from '../helpers/process.js';
import { BARE_SCRIPT } from './cold-start.js';
import { readContextSwitches, readMemory, readSmapsRollup } from './lib/proc.js';
import { sleep, spawnTracked, stopChild } from './lib/processes.js';
import { makeRow, type Row, type SectionOptions, skippedRow } from './lib/report.js';
import { type IdleTrace, traceIdle } from './lib/syscalls.js';

interface Sample extends IdleTrace {
  /** Context switches of all threads over a window of the same length before the trace (strace's own stops excluded). */
  switches: number;
  /** Resident memory once start-up has settled, read before the trace (strace stops the process, not its memory). */
  memory: IdleMemory;
}

interface IdleMemory {
  rssKb: number;
  /** The JS heap, native allocations and buffers. */
  anonKb: number;
  /** Pages of node's binary, its shared libraries and the addons that were touched (shared, clean, but resident). */
  fileKb: number;
  /** Private_Dirty + Private_Clean: what this process alone holds. */
  privateKb: number;
}

/** The appliance's budget for the idle daemon with no stream player configured (issue 37), in 10^6 bytes of VmRSS. */
export const IDLE_RSS_BUDGET_MB = 60;

function readIdleMemory(pid: number): IdleMemory {
  const memory = readMemory(pid);
  const smaps = readSmapsRollup(pid);
  return {
    rssKb: memory.rss,
    anonKb: memory.anon,
    fileKb: memory.file,
    privateKb: smaps ? smaps.privateDirty + smaps.privateClean : Number.NaN,
  };
}

const kbToMB = (kb: number) => (kb * 1024) / 1e6;
const mb = (kb: number) => `${Math.round(kbToMB(kb) * 10) / 10} MB`;

const per5s = (n: number, windowMs: number) => (n * 5000) / windowMs;

/** Lets start-up finish (V8 shrinks its heap), counts context switches over one window, then traces another. */
async function measure(pid: number, settleMs: number, windowMs: number): Promise<Sample> {
  await sleep(settleMs);
  const memory = readIdleMemory(pid);
  const before = readContextSwitches(pid).total;
  const started = performance.now();
  await sleep(windowMs);
  const switches = ((readContextSwitches(pid).total - before) * windowMs) / (performance.now() - started);
  return { ...(await traceIdle(pid, windowMs)), switches, memory };
}

/** A network namespace whose only link is a veth pair: discovery runs for real, and nothing leaves this machine. */
function namespace(name: string): { ok: true; remove(): void } | { ok: false; why: string } {
  if (process.getuid?.() !== 0) return { ok: false, why: 'needs root for a network namespace' };
  const steps = [
    ['netns', 'add', name],
    ['link', 'add', `${name}-a`, 'netns', name, 'type', 'veth', 'peer', 'name', `${name}-b`, 'netns', name],
    ['-n', name, 'addr', 'add', '10.81.0.1/24', 'dev', `${name}-a`],
    ['-n', name, 'link', 'set', `${name}-a`, 'up'],
    ['-n', name, 'link', 'set', `${name}-b`, 'up'],
    ['-n', name, 'link', 'set', 'lo', 'up'],
    ['-n', name, 'route', 'add', '224.0.0.0/4', 'dev', `${name}-a`],
  ];
  const remove = () => void spawnSync('ip', ['netns', 'delete', name]);
  for (const step of steps) {
    const result = spawnSync('ip', step, { encoding: 'utf8' });
    if (result.status !== 0) {
      remove();
      return { ok: false, why: `ip ${step.join(' ')}: ${result.error?.message ?? result.stderr.trim()}` };
    }
  }
  return { ok: true, remove };
}

async function daemonSample(
  args: string[],
  settleMs: number,
  windowMs: number,
  setup: { ns?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Sample> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'azc-bench-idle-'));
  let azcd: AzcdProcess | undefined;
  try {
    azcd = runAzcd({
      entry: 'built',
      args: [...args, '--state-dir', stateDir],
      env: setup.env,
      // ip netns exec execs the command: the pid is the daemon's.
      spawner: (command, argv, options) =>
        setup.ns
          ? spawnTracked('ip', ['netns', 'exec', setup.ns, command, ...argv], options)
          : spawnTracked(command, argv, options),
    });
    await azcd.waitFor(/listening on http/, 30_000);
    return await measure(azcd.child.pid!, settleMs, windowMs);
  } finally {
    await azcd?.stop('SIGTERM', 12_000).catch(() => {
      // Killed after the wait: the sample is taken, and the state folder goes below either way.
    });
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function bareSample(settleMs: number, windowMs: number): Promise<Sample> {
  const child = spawnTracked(process.execPath, ['--input-type=module', '-e', BARE_SCRIPT], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    return await measure(child.pid!, settleMs, windowMs);
  } finally {
    await stopChild(child, 2000);
  }
}

/** The idle daemon's resident memory against the budget, with what it is made of beside bare uWS's. */
function memoryRow(label: string, sample: Sample, bare: Sample, settleMs: number): Row {
  const parts = (m: IdleMemory) =>
    `anonymous (heap + native) ${mb(m.anonKb)}, file pages (node, libraries, addons) ${mb(m.fileKb)}, private ${mb(m.privateKb)}`;
  return makeRow({
    section: 'idle',
    name: `${label}: idle RSS ${Math.round(settleMs / 1000)} s after start, no stream player (budget < ${IDLE_RSS_BUDGET_MB} MB)`,
    value: kbToMB(sample.memory.rssKb),
    unit: 'MB',
    baseline: kbToMB(bare.memory.rssKb),
    target: { on: 'value', op: '<', threshold: IDLE_RSS_BUDGET_MB },
    note: `VmRSS in 10^6 bytes; daemon: ${parts(sample.memory)}; bare uWS: ${parts(bare.memory)}; what is not configured is not loaded (ARCHITECTURE.md, "Memory")`,
  });
}

function rows(label: string, sample: Sample, bare: Sample, note: string, settleMs: number): Row[] {
  const wakes = per5s(sample.wakes, sample.windowMs);
  const bareWakes = per5s(bare.wakes, bare.windowMs);
  const seconds = Math.round(sample.windowMs / 1000);
  const detail = (s: Sample) =>
    `${s.loopWakes} event-loop and ${s.threadWakes} thread wake-ups, ${s.memoryCalls} memory calls, ${s.processes} processes started in ${Math.round(s.windowMs / 1000)} s; ` +
    `${Math.round(per5s(s.switches, s.windowMs) * 10) / 10} context switches per 5 s`;
  return [
    memoryRow(label, sample, bare, settleMs),
    makeRow({
      section: 'idle',
      name: `${label}: wake-ups per 5 s, all threads (strace over ${seconds} s, no client)`,
      value: wakes,
      unit: 'wakes',
      baseline: bareWakes,
      note: `${note}; daemon: ${detail(sample)}; bare uWS: ${detail(bare)} (its 1 s Date-header timer and 4 s timeout sweep cannot be turned off from JavaScript)`,
      details: { sample, bare },
    }),
    makeRow({
      section: 'idle',
      name: `${label}: the daemon's own wake-ups per 5 s (beyond bare uWS's)`,
      value: Math.max(0, wakes - bareWakes),
      unit: 'wakes',
      target: { on: 'value', op: '<=', threshold: 1 },
      note: `system calls in the window: ${Object.entries(sample.calls)
        .map(([name, n]) => `${name} ${n}`)
        .join(', ')}`,
    }),
    makeRow({
      section: 'idle',
      name: `${label}: memory map calls and processes started per minute`,
      value: ((sample.memoryCalls + sample.processes) * 60_000) / sample.windowMs,
      unit: 'calls',
      baseline: ((bare.memoryCalls + bare.processes) * 60_000) / bare.windowMs,
      target: { on: 'value', op: '<=', threshold: 1 },
      note: 'mmap/munmap/madvise/mprotect/brk (the collector or the allocator at work) and fork/vfork/clone/execve (commands run)',
    }),
  ];
}

export async function benchIdle(options: SectionOptions): Promise<Row[]> {
  const settleMs = options.quick ? 8_000 : 15_000;
  // Longer than the slowest periodic work there is to catch: mDNS's interface check and the watchdog, every 15 s.
  const windowMs = options.quick ? 16_000 : 31_000;
  if (spawnSync('strace', ['-V']).status !== 0)
    return [skippedRow('idle', 'idle system calls', 'strace is not installed (npm run bench installs it as root)')];
  const bare = await bareSample(settleMs, windowMs);
  options.log(`idle: bare uWS ${bare.wakes} wake-ups in ${Math.round(bare.windowMs / 1000)} s`);
  // What `npm start` runs (the port aside: 8080 may be taken on a shared machine).
  const started = await daemonSample(['--host', '127.0.0.1', '--port', '0'], settleMs, windowMs);
  options.log(`idle: npm start ${started.wakes} wake-ups, ${started.processes} processes`);
  const out = rows(
    'npm start (simulated amplifier)',
    started,
    bare,
    'dist/daemon/main.js as npm start runs it, on 127.0.0.1',
    settleMs,
  );

  const name = `azcidle${process.pid % 10000}`;
  const ns = namespace(name);
  if (!ns.ok) return [...out, skippedRow('idle', 'as installed (SSDP, mDNS, watchdog)', ns.why)];
  // A real notify socket (a path: an abstract one would not cross into the namespace) with the unit's WatchdogSec=30.
  const socket = path.join(tmpdir(), `azc-bench-notify-${process.pid}.sock`);
  const receiver = await Receiver.start(socket);
  try {
    const installed = await daemonSample(['--host', '0.0.0.0', '--port', '8080', '--ssdp'], settleMs, windowMs, {
      ns: name,
      env: { NOTIFY_SOCKET: socket, WATCHDOG_USEC: '30000000' },
    });
    options.log(`idle: as installed ${installed.wakes} wake-ups, ${installed.processes} processes`);
    out.push(
      ...rows(
        'as installed (SSDP + mDNS on a LAN link, watchdog 30 s)',
        installed,
        bare,
        `in network namespace ${name} (a veth pair: nothing leaves the machine)`,
        settleMs,
      ),
    );
  } finally {
    await receiver.stop();
    rmSync(socket, { force: true });
    ns.remove();
  }
  return out;
}
