// Benchmark: how soon a keypad change reaches the driver's events and an API write reaches the wire, and how busy the
// line is idle and watched, on a Monoprice of three units at 9600 baud: this tree against a baseline revision's
// drivers/ (extracted to a temporary directory with `git archive`, default: the revision before polling by attention),
// in the same run. RNET's and Xantech's push paths are measured the same way, on this tree only.
// `node --import tsx test/bench/monoprice-keypad.ts [--baseline REV] [--idle-ms N] [--watched-ms N] [--families a,b]`
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isMain } from '../../drivers/emulator-cli.js';
import type { FamilyName, KeypadRun } from './lib/keypad-child.js';
import { BENCH_DIR, forkTs, nextMessage, ROOT, stopChild } from './lib/processes.js';
import { percentile } from './lib/stats.js';

export interface KeypadOptions {
  baseline: string;
  idleMs: number;
  watchedMs: number;
  families: FamilyName[];
}

/** The revision before polling by attention: the parent of the commit that brought watchedPollMs. */
function defaultBaseline(): string {
  const introduced = execFileSync(
    'git',
    ['log', '--format=%H', '--reverse', '-S', 'watchedPollMs', '--', 'drivers/core/work-loop.ts'],
    { cwd: ROOT, encoding: 'utf8' },
  )
    .split('\n')
    .find(Boolean);
  if (!introduced)
    throw new Error('no commit brought watchedPollMs into drivers/core/work-loop.ts: pass --baseline REV');
  return execFileSync('git', ['rev-parse', '--short', `${introduced}^`], { cwd: ROOT, encoding: 'utf8' }).trim();
}

function parseArgs(argv: string[]): KeypadOptions {
  const options: KeypadOptions = {
    baseline: '',
    idleMs: 20_000,
    watchedMs: 40_000,
    families: ['monoprice', 'rnet', 'xantech'],
  };
  for (let i = 0; i < argv.length; i++) {
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${argv[i - 1]} needs a value`);
      return next;
    };
    const arg = argv[i];
    if (arg === '--baseline') options.baseline = value();
    else if (arg === '--idle-ms') options.idleMs = Math.min(120_000, Number(value()));
    else if (arg === '--watched-ms') options.watchedMs = Math.min(300_000, Number(value()));
    else if (arg === '--families') options.families = value().split(',') as FamilyName[];
    else
      throw new Error(
        `unknown argument ${arg}: --baseline REV, --idle-ms N, --watched-ms N, --families monoprice,rnet,xantech`,
      );
  }
  if (!options.baseline) options.baseline = defaultBaseline();
  return options;
}

/** The baseline revision's drivers/ in a temporary directory, with this tree's packages. */
function extractBaseline(revision: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'azcd-keypad-baseline-'));
  const archive = execFileSync('git', ['archive', revision, 'drivers', 'package.json'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

async function runChild(family: FamilyName, root: string, options: KeypadOptions): Promise<KeypadRun> {
  const child = forkTs(path.join(BENCH_DIR, 'lib/keypad-child.ts'));
  try {
    await nextMessage(child, (m) => m?.type === 'ready', 30_000, 'keypad child start');
    child.send({ family, root, idleMs: options.idleMs, watchedMs: options.watchedMs });
    const limit = options.idleMs + options.watchedMs + 60_000;
    const answer = await nextMessage<{ result?: KeypadRun; error?: string }>(
      child,
      (m) => m?.type === 'result',
      limit,
      `keypad ${family}`,
    );
    if (!answer.result) throw new Error(`keypad ${family}: ${answer.error}`);
    return answer.result;
  } finally {
    await stopChild(child, 2000);
  }
}

export interface KeypadFigures {
  label: string;
  keypad: { count: number; unseen: number; p50: number; p95: number; p99: number };
  write: { count: number; p50: number; p99: number };
  utilisation: { idle: number; watched: number };
  commandsPerMinute: { idle: number; watched: number };
}

function figures(label: string, run: KeypadRun): KeypadFigures {
  const pct = (n: number): number => Math.round(n * 1000) / 10;
  return {
    label,
    keypad: {
      count: run.keypadMs.length,
      unseen: run.keypadUnseen,
      p50: percentile(run.keypadMs, 50),
      p95: percentile(run.keypadMs, 95),
      p99: percentile(run.keypadMs, 99),
    },
    write: { count: run.writeMs.length, p50: percentile(run.writeMs, 50), p99: percentile(run.writeMs, 99) },
    utilisation: { idle: pct(run.utilisation.idle), watched: pct(run.utilisation.watched) },
    commandsPerMinute: {
      idle: Math.round(run.commandsPerMinute.idle),
      watched: Math.round(run.commandsPerMinute.watched),
    },
  };
}

export async function benchKeypad(options: KeypadOptions): Promise<KeypadFigures[]> {
  const out: KeypadFigures[] = [];
  for (const family of options.families) {
    out.push(figures(`${family} (this tree)`, await runChild(family, ROOT, options)));
    if (family !== 'monoprice') continue;
    const dir = extractBaseline(options.baseline);
    try {
      out.push(figures(`monoprice (baseline ${options.baseline})`, await runChild(family, dir, options)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

export function printKeypad(options: KeypadOptions, results: KeypadFigures[]): void {
  console.log(
    `keypad → driver event and API write → wire, emulators on a pty at the real byte pacing (Monoprice: 3 units at 9600 baud); ` +
      `idle ${options.idleMs} ms (nobody watching), then watched ${options.watchedMs} ms (a keypad change every 0.1-0.5 s on a random other zone, ` +
      `a volume write every 0.15-0.45 s to the first zone); utilisation = bytes both ways × 10 bits ÷ baud ÷ time`,
  );
  console.table(
    Object.fromEntries(
      results.map((r) => [
        r.label,
        {
          'keypad n': r.keypad.count,
          unseen: r.keypad.unseen,
          'keypad p50 ms': r.keypad.p50,
          'keypad p95 ms': r.keypad.p95,
          'keypad p99 ms': r.keypad.p99,
          'write n': r.write.count,
          'write p50 ms': r.write.p50,
          'write p99 ms': r.write.p99,
          'line idle %': r.utilisation.idle,
          'line watched %': r.utilisation.watched,
          'cmds/min idle': r.commandsPerMinute.idle,
          'cmds/min watched': r.commandsPerMinute.watched,
        },
      ]),
    ),
  );
  console.log(JSON.stringify({ keypad: results }));
}

export async function mainKeypad(argv: string[]): Promise<void> {
  const options = parseArgs(argv);
  printKeypad(options, await benchKeypad(options));
}

if (isMain(import.meta.url)) await mainKeypad(process.argv.slice(2));
