// What the daemon ran during its longest sections: the samples of a V8 CPU profile (`--cpu-prof`) that fall inside
// each section the loop meter reported, counted per function (inclusive: anywhere on the stack; self: at its top).
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Window {
  label: string;
  /** Monotonic clock, milliseconds (the profile's own clock: process.hrtime in the daemon). */
  startMs: number;
  endMs: number;
}

const frameName = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return url ? `${functionName || '(anonymous)'} ${path.basename(url)}:${lineNumber + 1}` : functionName;
};

/** For each window, its samples and the functions that took most of them. */
export function attribute(profileFile: string, windows: Window[], top = 8): string[] {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const lines: string[] = [];
  for (const w of windows) {
    const inclusive = new Map<string, number>();
    const self = new Map<string, number>();
    let samples = 0;
    let at = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i]!;
      const ms = at / 1000;
      if (ms < w.startMs || ms > w.endMs) continue;
      samples++;
      const leaf = byId.get(profile.samples[i]!)!;
      self.set(frameName(leaf), (self.get(frameName(leaf)) ?? 0) + 1);
      const seen = new Set<string>();
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const name = frameName(byId.get(id)!);
        if (name === '(root)' || seen.has(name)) continue;
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
      }
    }
    lines.push(`${w.label}: ${samples} samples`);
    const ranked = [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [name, count] of ranked)
      lines.push(`    ${String(count).padStart(5)} incl ${String(self.get(name) ?? 0).padStart(5)} self  ${name}`);
  }
  return lines;
}
