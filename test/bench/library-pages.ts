// What the library's kept folder pays: the next page of a large folder read from the kept, sorted listing (one
// `stats` to check MPD's database did not change) against the same page read as a first page (`lsinfo`, parse, sort),
// alternating on one real mpd in the same run (npm run bench:library; needs mpd and sox; -- --quick for fewer runs).
import { linkSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { musicRootOf, playerFiles, renderConfig, writePlayerConfig } from '../../drivers/mpd/config.js';
import { MpdConnection } from '../../drivers/mpd/connection.js';
import { systemClock } from '../../drivers/mpd/engine.js';
import { MpdLibrary } from '../../drivers/mpd/library.js';
import { MpdProcess } from '../../drivers/mpd/process.js';
import { tempDir } from '../helpers/daemon.js';
import { MPD, tone } from '../helpers/mpd-rig.js';
import { delay } from './lib/pcm-probe.js';
import { readLoadAverage } from './lib/proc.js';
import { summarize } from './lib/stats.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 10 : 30;
const TRACKS = 3_000;

async function main(): Promise<void> {
  const dir = tempDir('azc-bench-library-');
  const cleanups: Array<() => unknown> = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const music = path.join(dir, 'music');
    const source = path.join(music, 'tagged.flac');
    tone(source, 0.05, 440, { title: 'A track title of ordinary length', artist: 'An artist', album: 'An album' });
    mkdirSync(path.join(music, 'big'));
    for (let i = 1; i <= TRACKS; i++) linkSync(source, path.join(music, 'big', `track-${i}.flac`));

    const files = playerFiles(path.join(dir, 'state'), 'bench');
    const musicRoot = musicRootOf(music);
    writePlayerConfig(files, renderConfig({ files, musicRoot, output: { kind: 'null' }, logLevel: 'warning' }));
    const proc = await MpdProcess.spawn({
      mpdPath: MPD,
      files,
      clock: systemClock,
      log: () => undefined,
      startTimeoutMs: 20_000,
      stopTimeoutMs: 5_000,
      musicRoot,
    });
    const connection = await proc.ready(() =>
      MpdConnection.connect(files.socket, { clock: systemClock, timeoutMs: 10_000 }),
    );
    cleanups.unshift(async () => {
      connection.close();
      await proc.stop();
    });
    // The database is written on the first start: wait for that scan (bounded: 60 s).
    for (
      let waited = 0;
      (await connection.request(['status']))[0]!.some(([key]) => key === 'updating_db');
      waited += 50
    ) {
      if (waited > 60_000) throw new Error('mpd did not finish its first scan within 60 s');
      await delay(50);
    }
    const library = new MpdLibrary({
      musicRoot: () => musicRoot,
      connection: async () => connection,
      update: async () => undefined,
      scanning: () => undefined,
    });
    const page = { offset: 100, limit: 100 };
    const first = await library.list('big', { offset: 0, limit: 100 });
    if (first.total !== TRACKS) throw new Error(`the folder lists ${first.total} entries, not ${TRACKS}`);

    // Alternating: a page read as a first page (the kept listing dropped, as a change of folder drops it) and the
    // next page from the kept listing. Only the bench reaches in to drop it.
    const cold: number[] = [];
    const kept: number[] = [];
    const forget = () => ((library as unknown as { last: unknown }).last = undefined);
    for (let round = 0; round < ROUNDS; round++) {
      forget();
      let at = performance.now();
      await library.list('big', page);
      cold.push(performance.now() - at);
      at = performance.now();
      await library.list('big', page);
      kept.push(performance.now() - at);
    }
    const c = summarize(cold);
    const k = summarize(kept);
    const ratios = cold.map((value, i) => value / kept[i]!).sort((a, b) => a - b);
    console.log(
      `library page of a ${TRACKS}-track folder, ${ROUNDS} alternating rounds, load average ${readLoadAverage()}`,
    );
    console.log(`  read as a first page (lsinfo, parse, sort): p50 ${c.p50.toFixed(1)} ms, p99 ${c.p99.toFixed(1)} ms`);
    console.log(`  from the kept listing (stats only):         p50 ${k.p50.toFixed(1)} ms, p99 ${k.p99.toFixed(1)} ms`);
    console.log(
      `  ratio cold / kept per round: median ${ratios[Math.floor(ratios.length / 2)]!.toFixed(1)} (${ratios[0]!.toFixed(1)}–${ratios.at(-1)!.toFixed(1)})`,
    );
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

await main();
