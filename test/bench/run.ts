// `npm run bench`: every benchmark section against its same-run baseline; a table on stdout, JSON in bench-results/,
// and (full runs) each section's figures in docs/benchmarks.md between its markers.
import path from 'node:path';
import { benchCoalescing } from './coalescing.js';
import { benchColdStart } from './cold-start.js';
import { benchHttp } from './http-ratios.js';
import { benchIcount } from './icount.js';
import { benchIdle } from './idle.js';
import { FIGURES_DOC, revision, sectionFigures, writeFigures } from './lib/doc-figures.js';
import { openFileLimit, readLoadAverage } from './lib/proc.js';
import { ensureBuild } from './lib/processes.js';
import { formatTable, machineInfo, type Row, type SectionOptions, writeResults } from './lib/report.js';
import { benchMonoprice } from './monoprice.js';
import { benchPlaybackDaemon } from './playback-daemon.js';
import { benchSnapserver, SNAPCAST_INSTALL_HINT } from './snapserver.js';
import { benchSse } from './sse-fanout.js';

const SECTIONS: Record<string, { about: string; run: (options: SectionOptions) => Promise<Row[]> }> = {
  start: {
    about: 'first start and restart to ready, idle RSS and private memory, idle wake-ups, vs a bare uWS node process',
    run: benchColdStart,
  },
  idle: {
    about:
      'an idle daemon (npm start, and as installed with SSDP, mDNS and the watchdog): wake-ups, memory calls and processes by strace, vs bare uWS',
    run: benchIdle,
  },
  http: {
    about:
      'GET /api/users/me, GET /api/players and login vs bare uWS, PUT player volume vs the same-work baseline (and bare uWS), driven by wrk',
    run: benchHttp,
  },
  sse: { about: 'SSE fan-out to 100/1000/2000 subscribers: delivery latency and RSS per subscriber', run: benchSse },
  monoprice: {
    about: 'test/bench/monoprice-drag.ts (slider drag through the Monoprice driver), if present',
    run: benchMonoprice,
  },
  snapserver: {
    about: 'snapserver Client.SetVolume vs PUT /api/zones/{id}/volume, if snapserver is installed',
    run: benchSnapserver,
  },
  playback: {
    about:
      'a stream player on a FIFO through the built daemon vs the engine alone: POST …/play → first PCM byte, daemon and mpd memory and CPU playing FLAC',
    run: benchPlaybackDaemon,
  },
  coalescing: {
    about:
      'each coalescing step of the write path on and off (ARCHITECTURE.md): volume PUT vs bare uWS, MQTT bursts and fan-out, driver intents',
    run: benchCoalescing,
  },
  icount: {
    about:
      'instructions per request under callgrind (the regression guard, independent of load): me, players, put vs bare uWS',
    run: benchIcount,
  },
};

const USAGE = `usage: node --import tsx test/bench/run.ts [--quick] [--only ${Object.keys(SECTIONS).join(',')}] [--no-doc] [--install]
  --quick    short runs (2 s instead of 5 s, 2 rounds instead of 5, fewer SSE sizes) for development; not written to the doc
  --only     run only the named sections
  --no-doc   do not write the figures into docs/benchmarks.md (a full run writes each section it ran)
  --sse-sizes N,...  subscriber counts for the sse section (default 100,1000,2000)
  --install  print how to install the snapserver peer and exit
sections:
${Object.entries(SECTIONS)
  .map(([name, s]) => `  ${name.padEnd(11)}${s.about}`)
  .join('\n')}`;

function parseArgs(argv: string[]): { quick: boolean; only: string[]; sseSizes?: number[]; doc: boolean } {
  let quick = false;
  let doc = true;
  let sseSizes: number[] | undefined;
  let only = Object.keys(SECTIONS);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--no-doc') doc = false;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      only = (value ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const unknown = only.filter((name) => !SECTIONS[name]);
      if (unknown.length || only.length === 0)
        throw new Error(`unknown section(s) ${unknown.join(', ') || '(none given)'}\n${USAGE}`);
    } else if (arg === '--sse-sizes') {
      sseSizes = (argv[++i] ?? '').split(',').map(Number);
      if (!sseSizes.length || sseSizes.some((n) => !Number.isInteger(n) || n < 1 || n > 5000))
        throw new Error('--sse-sizes takes a list of 1-5000');
    } else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (arg === '--install') {
      console.log(`snapserver peer comparison: ${SNAPCAST_INSTALL_HINT}`);
      process.exit(0);
    } else throw new Error(`unknown option ${arg}\n${USAGE}`);
  }
  return { quick, only, sseSizes, doc: doc && !quick };
}

async function main(): Promise<void> {
  const { quick, only, sseSizes, doc } = parseArgs(process.argv.slice(2));
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  log(`azcd benchmarks (${quick ? 'quick' : 'full'}): ${only.join(', ')}`);
  log(
    `machine: ${machine.cores} cores (${machine.cpuModel}), node ${machine.node}, open-file limit ${openFileLimit().soft}; every target is 127.0.0.1`,
  );
  log(
    'daemon log level: info (the default), stdout to /dev/null; HTTP load from wrk pinned to core 1, servers pinned to core 0',
  );
  const loadBefore = readLoadAverage();
  if (loadBefore > 0.5)
    log(
      `warning: load average ${loadBefore} before starting: other processes compete for the 2 cores, figures will be noisy`,
    );
  await ensureBuild(log);

  const rows: Row[] = [];
  const failures: Array<{ section: string; error: string }> = [];
  const figures: Record<string, string> = {};
  const rev = revision();
  for (const name of only) {
    const section = SECTIONS[name]!;
    const began = performance.now();
    const at = new Date();
    const loadAtStart = readLoadAverage();
    log(`\n== ${name}: ${section.about}`);
    try {
      const sectionRows = await section.run({ quick, log, sseSizes });
      rows.push(...sectionRows);
      figures[name] = sectionFigures(sectionRows, { at, quick, load: [loadAtStart, readLoadAverage()], machine }, rev);
      log(`== ${name}: done in ${Math.round((performance.now() - began) / 1000)} s`);
    } catch (err) {
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failures.push({ section: name, error: message });
      log(`== ${name}: BROKEN: ${message}`);
    }
  }

  log('');
  log(formatTable(rows));
  const missed = rows.filter((r) => r.pass === false).length;
  const passed = rows.filter((r) => r.pass === true).length;
  log(
    `\n${passed} targets met, ${missed} missed${failures.length ? `, ${failures.length} section(s) broken: ${failures.map((f) => f.section).join(', ')}` : ''}`,
  );
  const file = writeResults('bench', {
    kind: 'bench',
    startedAt,
    finishedAt: new Date().toISOString(),
    machine,
    options: {
      quick,
      only,
      sseSizes,
      logLevel: 'info (default), stdout → /dev/null',
      http: 'wrk -t1 -c10, taskset: server core 0, wrk core 1',
    },
    loadAverage: { before: loadBefore, after: readLoadAverage() },
    rows,
    failures,
  });
  log(`results: ${path.relative(process.cwd(), file)}`);
  const docName = path.relative(process.cwd(), FIGURES_DOC);
  if (doc) {
    const { written, missing } = writeFigures(figures);
    if (written.length) log(`figures of ${written.join(', ')} written to ${docName}`);
    if (missing.length) log(`${docName} has no place for the figures of ${missing.join(', ')} (printed above only)`);
  } else log(`figures not written to ${docName} (${quick ? 'a quick run' : '--no-doc'})`);
  // A missed target is a finding, not a failure; a broken benchmark is.
  if (failures.length) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
