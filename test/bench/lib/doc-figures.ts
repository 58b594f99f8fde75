// Writes npm run bench's figures into docs/benchmarks.md: each section's table between its own pair of markers.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes.js';
import type { Row } from './report.js';
import { round } from './stats.js';

export const FIGURES_DOC = path.join(ROOT, 'docs/benchmarks.md');

export const beginMarker = (section: string) => `<!-- bench:${section} begin: written by npm run bench -->`;
export const endMarker = (section: string) => `<!-- bench:${section} end -->`;

/** Where and how a section was measured: stated above its figures. */
export interface Measured {
  at: Date;
  quick: boolean;
  /** Load average (1 minute) when the section began and ended. */
  load: [number, number];
  machine: { cores?: unknown; cpuModel?: unknown; node?: unknown };
}

/** The commit measured, and whether the code it runs (daemon, drivers, scripts) had changes not committed. */
export function revision(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const changed = git('status', '--porcelain', '--', 'daemon', 'drivers', 'scripts', 'native') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${changed ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'an unknown revision (no git)';
  }
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const amount = (value: number | undefined, unit: string) =>
  value === undefined ? '' : Number.isFinite(value) ? `${round(value)}${unit ? ` ${unit}` : ''}` : '–';

function result(row: Row): string {
  if (row.note?.startsWith('skipped')) return 'skipped';
  if (row.note?.startsWith('refused')) return 'refused (generator-bound)';
  if (row.pass === true) return '✓';
  if (row.pass === false) return '✗ missed';
  return '';
}

/** A section's figures as markdown: what was measured under which load, a table, and each row's notes. */
export function sectionFigures(rows: Row[], measured: Measured, rev: string): string {
  const { at, quick, load, machine } = measured;
  const when = `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const lines = [
    `Measured ${when} (${quick ? 'quick' : 'full'} run) at ${rev}; ${machine.cores} cores (${machine.cpuModel}), node ` +
      `${machine.node}; load average ${load[0]} at the start, ${load[1]} at the end` +
      `${Math.max(...load) > 1 ? ' (other work competed for the cores: read the ratios and CPU per request, not the absolute rates)' : ''}.`,
    '',
    '| benchmark | azcd | baseline | ratio (spread) | target | |',
    '|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const ratio =
      row.ratio === undefined
        ? ''
        : `${amount(row.ratio, '')}${row.spread ? ` (${round(row.spread[0])}–${round(row.spread[1])})` : ''}`;
    const target = row.target
      ? `${row.target.on === 'ratio' ? 'ratio ' : ''}${row.target.op === '>=' ? '≥' : row.target.op === '<=' ? '≤' : '<'} ${row.target.threshold}${row.target.on === 'value' && row.unit ? ` ${row.unit}` : ''}`
      : '';
    lines.push(
      `| ${cell(row.name)} | ${amount(row.value, row.unit)} | ${amount(row.baseline, row.unit)} | ${ratio} | ${target} | ${result(row)} |`,
    );
  }
  const notes = rows.filter((r) => r.note && !r.note.startsWith('skipped'));
  if (notes.length) lines.push('', ...notes.map((r) => `- ${cell(r.name)}: ${cell(r.note!)}`));
  return lines.join('\n');
}

/**
 * Replaces each section's figures between its markers; returns the sections written and those the file has no
 * markers for (their figures are printed only).
 */
export function writeFigures(
  blocks: Record<string, string>,
  file = FIGURES_DOC,
): { written: string[]; missing: string[] } {
  let text = readFileSync(file, 'utf8');
  const written: string[] = [];
  const missing: string[] = [];
  for (const [section, block] of Object.entries(blocks)) {
    const begin = text.indexOf(beginMarker(section));
    const end = text.indexOf(endMarker(section));
    if (begin < 0 || end < begin) {
      missing.push(section);
      continue;
    }
    text = `${text.slice(0, begin + beginMarker(section).length)}\n${block}\n${text.slice(end)}`;
    written.push(section);
  }
  if (written.length) writeFileSync(file, text);
  return { written, missing };
}
