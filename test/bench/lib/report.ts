// Benchmark rows: judged against their targets, printed as one table and written as JSON under bench-results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './processes.js';
import { round } from './stats.js';

/** What every benchmark section receives from run.ts. */
export interface SectionOptions {
  quick: boolean;
  log: (line: string) => void;
  /** Subscriber counts for the SSE fan-out (default 100, 1000, 2000; quick 100, 1000). */
  sseSizes?: number[];
}

export interface Target {
  /** What the threshold applies to: the measured value or value/baseline. */
  on: 'value' | 'ratio';
  op: '>=' | '<' | '<=';
  threshold: number;
}

export interface Row {
  section: string;
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  /** value / baseline; for throughput higher is better, for time and memory lower is better. */
  ratio?: number;
  /** Lowest and highest per-round ratio when the ratio is a median over rounds. */
  spread?: [number, number];
  target?: Target;
  /** null: informational (no target) or skipped. */
  pass?: boolean | null;
  note?: string;
  details?: unknown;
}

export function makeRow(row: Omit<Row, 'ratio' | 'pass'> & { ratio?: number }): Row {
  const ratio = row.ratio ?? (row.baseline !== undefined && row.baseline !== 0 ? row.value / row.baseline : undefined);
  let pass: boolean | null = null;
  if (row.target && Number.isFinite(row.value)) {
    const subject = row.target.on === 'ratio' ? ratio : row.value;
    if (subject !== undefined && Number.isFinite(subject)) {
      const t = row.target.threshold;
      pass = row.target.op === '>=' ? subject >= t : row.target.op === '<' ? subject < t : subject <= t;
    }
  }
  return { ...row, ratio, pass };
}

export function skippedRow(section: string, name: string, why: string): Row {
  return { section, name, value: Number.NaN, unit: '', pass: null, note: `skipped: ${why}` };
}

const fmt = (value: number | undefined, unit = ''): string => {
  if (value === undefined) return '';
  if (!Number.isFinite(value)) return '-';
  return `${round(value)}${unit ? ` ${unit}` : ''}`;
};

const targetText = (target: Target | undefined, unit: string): string =>
  target
    ? `${target.on === 'ratio' ? 'ratio ' : ''}${target.op} ${target.threshold}${target.on === 'value' && unit ? ` ${unit}` : ''}`
    : '';

export function formatTable(rows: Row[]): string {
  const header = ['benchmark', 'value', 'baseline', 'ratio', 'target', 'result'];
  const body = rows.map((r) => [
    `${r.section}: ${r.name}`,
    fmt(r.value, r.unit),
    fmt(r.baseline, r.unit),
    r.ratio === undefined ? '' : `${fmt(r.ratio)}${r.spread ? ` (${fmt(r.spread[0])}-${fmt(r.spread[1])})` : ''}`,
    targetText(r.target, r.unit),
    r.note?.startsWith('skipped')
      ? 'skipped'
      : r.note?.startsWith('refused')
        ? 'REFUSED'
        : r.pass === null || r.pass === undefined
          ? 'info'
          : r.pass
            ? 'PASS'
            : 'MISS',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
  const notes = rows.filter((r) => r.note).map((r) => `  - ${r.section}: ${r.name}: ${r.note}`);
  if (notes.length) out.push('', 'notes:', ...notes);
  return out.join('\n');
}

export function machineInfo(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model,
    memoryMiB: Math.round(os.totalmem() / 1048576),
    node: process.version,
    kernel: os.release(),
    platform: `${process.platform}-${process.arch}`,
  };
}

/** Writes `bench-results/<prefix>-<timestamp>.json` (the folder is git-ignored) and returns its path. */
export function writeResults(prefix: string, data: Record<string, unknown>): string {
  const dir = path.join(ROOT, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = path.join(dir, `${prefix}-${stamp}.json`);
  writeFileSync(
    file,
    `${JSON.stringify(data, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`,
  );
  return file;
}
