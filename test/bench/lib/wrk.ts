// One bounded wrk run (the native load generator) pinned to its own core, with both sides' CPU time per request.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readCpuNs } from './proc.js';
import { assertLoopback, spawnTracked, stopChild } from './processes.js';

export interface WrkSpec {
  title: string;
  /** http://127.0.0.1:port (loopback only). */
  base: string;
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** Request bodies sent in turn on each connection (several: every request changes something). */
  bodies?: string[];
  connections: number;
  durationS: number;
  /** The server's pid (its CPU time is read from /proc before and after the run). */
  serverPid: number;
  /** The core wrk runs on (`taskset -c`); the server is pinned to the other one by pinProcess. */
  core: number;
}

export interface WrkResult {
  title: string;
  requests: number;
  /** Responses that were not 2xx/3xx, and socket errors (connect, read, write, timeout). */
  non2xx: number;
  errors: number;
  durationS: number;
  reqPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  serverCpuShare: number;
  serverCpuUsPerRequest: number;
  generatorCpuShare: number;
  generatorCpuUsPerRequest: number;
}

let checked = false;

/** Fails with what to do when wrk or taskset is missing (scripts/install-bench-deps.sh installs wrk as root). */
export function assertWrk(): void {
  if (checked) return;
  for (const tool of ['wrk', 'taskset']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      throw new Error(
        `${tool} is not installed: run "sudo bash scripts/install-bench-deps.sh" (Debian package ${tool === 'wrk' ? 'wrk' : 'util-linux'})`,
      );
    }
  }
  checked = true;
}

/** Pins every thread of a running process to one core, so the generator and the server never share one. */
export function pinProcess(pid: number, core: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
}

/** Lua long strings need no escaping as long as the text does not contain their closing bracket. */
function luaString(text: string): string {
  if (text.includes(']==]')) throw new Error('wrk script text may not contain "]==]"');
  return `[==[${text}]==]`;
}

/**
 * The wrk script: a static request (formatted once by wrk) unless several bodies alternate; `done` prints the
 * summary and wrk's own CPU time (read from /proc/self/stat after its threads ended) as one JSON line.
 */
function script(spec: WrkSpec): string {
  const headers = Object.entries(spec.headers)
    .map(([k, v]) => `  [ ${luaString(k)} ] = ${luaString(v)},`)
    .join('\n');
  const bodies = spec.bodies ?? [];
  const lines = [
    `wrk.method = ${luaString(spec.method)}`,
    `wrk.path = ${luaString(spec.path)}`,
    `local extra = {\n${headers}\n}`,
    'for k, v in pairs(extra) do wrk.headers[k] = v end',
  ];
  if (bodies.length === 1) lines.push(`wrk.body = ${luaString(bodies[0]!)}`);
  if (bodies.length > 1) {
    lines.push(
      `local bodies = { ${bodies.map(luaString).join(', ')} }`,
      'local prepared = {}',
      'local turn = 0',
      'init = function(args) for i, b in ipairs(bodies) do prepared[i] = wrk.format(nil, nil, nil, b) end end',
      'request = function() turn = turn % #prepared + 1; return prepared[turn] end',
    );
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local f = io.open("/proc/self/stat", "r"); local stat = f:read("*a"); f:close()',
    '  local e = summary.errors',
    '  io.write(string.format(\'WRK {"requests":%d,"durationUs":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"stat":"%s"}\\n\',',
    '    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,',
    '    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, stat:gsub("[\\n\\"\\\\]", " ")))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

const TICKS_PER_S = 100;

/** utime + stime of a /proc/<pid>/stat line, in milliseconds. */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
}

let ticks: number | undefined;
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || TICKS_PER_S;
    } catch {
      ticks = TICKS_PER_S;
    }
  }
  return ticks;
}

/** Runs wrk once (1 thread, bounded by -d and a kill deadline) and returns throughput, latency and CPU per request. */
export async function runWrk(spec: WrkSpec): Promise<WrkResult> {
  assertWrk();
  assertLoopback(spec.base);
  if (!(spec.durationS > 0 && spec.durationS <= 600))
    throw new Error(`a wrk run must last 0-600 s, got ${spec.durationS}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-wrk-'));
  const file = path.join(dir, 'request.lua');
  writeFileSync(file, script(spec));
  const durationS = Math.max(1, Math.round(spec.durationS));
  const args = [
    '-c',
    String(spec.core),
    'wrk',
    '-t1',
    `-c${spec.connections}`,
    `-d${durationS}s`,
    '--timeout',
    '5s',
    '-s',
    file,
    spec.base,
  ];
  try {
    // The scheduler's nanoseconds, not 10 ms ticks: on a busy machine a server may run only ~100 ms of a 5 s run.
    const serverBefore = readCpuNs(spec.serverPid);
    const started = performance.now();
    const child = spawnTracked('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
    const deadline = setTimeout(() => void stopChild(child, 1000), (durationS + 20) * 1000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(deadline);
    const wallMs = performance.now() - started;
    const serverCpuMs = (readCpuNs(spec.serverPid) - serverBefore) / 1e6;
    const line = /^WRK (.*)$/m.exec(out)?.[1];
    if (code !== 0 || !line)
      throw new Error(`wrk "${spec.title}" failed (exit ${code}): ${(err || out).slice(0, 500)}`);
    const w = JSON.parse(line) as Record<string, number> & { stat: string };
    const runS = w.durationUs / 1e6;
    const generatorCpuMs = statCpuMs(w.stat);
    if (w.requests === 0) throw new Error(`wrk "${spec.title}" completed no request`);
    return {
      title: spec.title,
      requests: w.requests,
      non2xx: w.status,
      errors: w.connect + w.read + w.write + w.timeout,
      durationS: runS,
      reqPerSec: w.requests / runS,
      latencyMs: { p50: w.p50 / 1000, p90: w.p90 / 1000, p99: w.p99 / 1000, max: w.max / 1000 },
      // The server is idle outside the run; wrk's start-up is a few ms of the wall time.
      serverCpuShare: serverCpuMs / wallMs,
      serverCpuUsPerRequest: (serverCpuMs * 1000) / w.requests,
      generatorCpuShare: generatorCpuMs / (runS * 1000),
      generatorCpuUsPerRequest: (generatorCpuMs * 1000) / w.requests,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The generator set the pace when its core was (nearly) full while the server's was not: the server's figure is
 * then a floor, and a ratio built on it says nothing about the server.
 */
export function generatorBound(r: WrkResult): boolean {
  return r.generatorCpuShare >= 0.9 && r.serverCpuShare < 0.9;
}
