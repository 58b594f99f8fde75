// Includes the Monoprice slider-drag benchmark (test/bench/monoprice-drag.ts) when it exists, in a child process.
import path from 'node:path';
import { BENCH_DIR, forkTs, nextMessage, stopChild } from './lib/processes.js';
import { makeRow, type Row, type SectionOptions, skippedRow } from './lib/report.js';

interface DragShape {
  changes?: number;
  dragMs?: number;
  commandsOnWire?: number;
  lastValueLatencyMs?: number;
  baseline?: { commandsOnWire?: number; lastValueLatencyMs?: number };
}

export async function benchMonoprice(options: SectionOptions): Promise<Row[]> {
  const child = forkTs(path.join(BENCH_DIR, 'lib/monoprice-child.ts'));
  try {
    await nextMessage(child, (m) => m?.type === 'ready', 30_000, 'monoprice child start');
    child.send({ type: 'run' });
    const answer = await nextMessage<{ result?: unknown; missing?: string }>(
      child,
      (m) => m?.type === 'result',
      120_000,
      'monoprice drag',
    );
    if (answer.missing) return [skippedRow('monoprice', 'slider drag', answer.missing)];
    const r = answer.result as DragShape;
    options.log(`monoprice: ${JSON.stringify(r)}`);
    const what = `${r.changes ?? '?'} volume changes in ${r.dragMs ?? '?'} ms through MonopriceDriver (emulator on a pty at 9600 baud) vs one command per change`;
    if (typeof r.lastValueLatencyMs !== 'number' || typeof r.commandsOnWire !== 'number') {
      return [
        makeRow({
          section: 'monoprice',
          name: 'slider drag (unrecognised result shape)',
          value: Number.NaN,
          unit: '',
          details: r,
          note: JSON.stringify(r).slice(0, 300),
        }),
      ];
    }
    return [
      makeRow({
        section: 'monoprice',
        name: 'slider drag: last value on the amplifier after the last change',
        value: r.lastValueLatencyMs,
        unit: 'ms',
        baseline: r.baseline?.lastValueLatencyMs,
        note: what,
        details: r,
      }),
      makeRow({
        section: 'monoprice',
        name: 'slider drag: volume commands on the wire',
        value: r.commandsOnWire,
        unit: 'cmds',
        baseline: r.baseline?.commandsOnWire,
      }),
    ];
  } finally {
    await stopChild(child, 2000);
  }
}
