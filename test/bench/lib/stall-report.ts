// The stall benchmark's summary: per phase, the health latency seen from outside beside what the daemon's own main
// thread did (its longest section in CPU time, its longest garbage-collection pause), and the machine's load.
import type { MeterFigures, Section } from './phase-meter.js';

export interface Phase {
  phase: string;
  seconds: number;
  health: { count: number; p50: number; p99: number; max: number };
  maxVsIdle: number;
  /** The daemon's main thread over the phase (loop-meter.mjs). */
  meter: MeterFigures;
  rssMb: number;
  peakRssMb: number;
  /** The 1-minute load average when the phase ended. */
  load: number;
  note: string;
}

/** The section a phase's verdict is about: the most CPU time the main thread ran without the loop turning. */
export const longestSection = (p: Phase): Section | undefined => p.meter.byCpu[0];
/** The pause whose own part (CPU time, not waiting for a core) was longest. */
export const longestGc = (p: Phase) => p.meter.gc.longestOwn[0];

const ms = (value: number | undefined, digits = 1) => (value === undefined ? '–' : value.toFixed(digits));

/** One line per phase, columns padded; the notes below it say what each column is. */
export function stallTable(phases: Phase[]): string[] {
  const header = [
    'phase'.padEnd(42),
    'time'.padStart(7),
    'health p50/p99/max ms'.padStart(23),
    'max÷idle'.padStart(9),
    'section CPU ms (wall)'.padStart(22),
    '>50'.padStart(4),
    'GC pause own (wall)'.padStart(26),
    'GC total'.padStart(9),
    'CPU s main+other'.padStart(17),
    'RSS/peak MB'.padStart(12),
    'load'.padStart(5),
    '  note',
  ].join('');
  const lines = [header];
  for (const p of phases) {
    const section = longestSection(p);
    const gc = longestGc(p);
    lines.push(
      [
        p.phase.padEnd(42),
        `${p.seconds.toFixed(1)} s`.padStart(7),
        `${ms(p.health.p50)} / ${ms(p.health.p99)} / ${ms(p.health.max)}`.padStart(23),
        p.maxVsIdle.toFixed(1).padStart(9),
        (section ? `${ms(section.cpuMs)} (${ms(section.wallMs, 0)})` : '–').padStart(22),
        String(p.meter.over50).padStart(4),
        (gc ? `${ms(gc.ownMs)} (${ms(gc.ms)}) ${gc.kind}` : '–').padStart(26),
        `${p.meter.gc.totalMs.toFixed(0)}`.padStart(9),
        `${(p.meter.mainCpuMs / 1000).toFixed(1)}+${(p.meter.othersCpuMs / 1000).toFixed(1)}`.padStart(17),
        `${p.rssMb.toFixed(0)}/${p.peakRssMb.toFixed(0)}`.padStart(12),
        p.load.toFixed(1).padStart(5),
        `  ${p.note}`,
      ].join(''),
    );
  }
  return lines;
}

/**
 * Per phase: the longest stretches by wall time split into the main thread's CPU, waiting for a core and blocked
 * (with the other threads' CPU meanwhile), and the longest garbage-collection pauses by wall time.
 */
export function sectionDetails(phases: Phase[]): string[] {
  const lines: string[] = [];
  for (const p of phases) {
    const parts = p.meter.byWall
      .slice(0, 3)
      .map(
        (s) =>
          `${ms(s.wallMs, 0)} = ${ms(s.cpuMs)} CPU + ${ms(s.queuedMs)} queued + ${ms(s.blockedMs)} blocked (other threads ${ms(s.othersCpuMs)} CPU)`,
      );
    const pauses = p.meter.gc.longest.slice(0, 3).map((g) => `${ms(g.ms)} ${g.kind} (own ≤ ${ms(g.ownMs)})`);
    lines.push(`${p.phase}: ${parts.join('; ') || '–'}`);
    lines.push(`${' '.repeat(p.phase.length)}  GC by wall: ${pauses.join(', ') || '–'}`);
  }
  return lines;
}
