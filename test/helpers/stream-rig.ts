// A daemon with stream players played by the real MPD: a music folder of sox tones, FIFO outputs the test reads, and
// the domain events as they are published, to wait on.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { type Config, defaultConfig } from '../../daemon/config.js';
import type { StampedEvent } from '../../daemon/domain/shared/index.js';
import { type StartOptions, startTestDaemon, type TestDaemon, tempDir } from './daemon.js';
import { type Client, injectClient } from './inject.js';
import { FifoReader, MPD, musicFolder, TRACKS } from './mpd-rig.js';
import { Changes, WAIT_MS, waitFor } from './wait-for.js';

export { TRACKS };

/** How long a new player's MPD may take to come up: its first scan of the music folder, which a test makes big. */
const FIRST_SCAN_WAIT_MS = 90_000;

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface StreamRig {
  d: TestDaemon;
  /** The first admin, through the daemon's in-process pipeline. */
  api: Client;
  music: string;
  events: StampedEvent[];
  /** The first event from `from` on (an index into events) that matches, waited for. */
  next<T extends StampedEvent['type']>(
    type: T,
    match?: (event: Extract<StampedEvent, { type: T }>) => boolean,
    from?: number,
  ): Promise<Extract<StampedEvent, { type: T }>>;
  /** A stream player on `channel` with a FIFO output read by the returned reader, its MPD up. */
  fifoPlayer(name: string, channel: number): Promise<{ id: string; fifo: string; reader: () => FifoReader }>;
  /** Resolves once the player's playback (GET …/playback) satisfies `match`. */
  until(playerId: string, match: (playback: any) => boolean, what: string): Promise<any>;
}

/** Starts a daemon whose stream players play `music` (sox tones unless given) with the real MPD. */
export async function startStreamDaemon(
  t: Teardown,
  options: StartOptions & { music?: string; playback?: Partial<Config['playback']> } = {},
): Promise<StreamRig> {
  const music = options.music ?? musicFolder(t);
  const fifos = tempDir('azc-fifo-');
  t.teardown(() => rmSync(fifos, { recursive: true, force: true }));
  // Test radio stations listen on loopback ports: allowed here, as playback.streamHosts allows them on an appliance.
  const config = {
    ...options.config,
    playback: {
      ...defaultConfig().playback,
      mpdPath: MPD,
      streamHosts: ['127.0.0.1'],
      ...options.playback,
      musicDir: music,
    },
  };
  const d = await startTestDaemon(t, { ...options, config });
  const events: StampedEvent[] = [];
  const changes = new Changes();
  const off = d.daemon.services.bus.subscribe('test', (event) => {
    events.push(event);
    changes.notify();
  });
  t.teardown(off);
  const api = injectClient(d.daemon, d.adminKey);
  const readers: FifoReader[] = [];
  t.teardown(() => readers.forEach((reader) => reader.close()));
  const next = ((type: string, match: (event: StampedEvent) => boolean = () => true, from = 0) =>
    waitFor(() => events.slice(from).find((event) => event.type === type && match(event)), WAIT_MS, {
      what: `a ${type} event`,
      changes,
    })) as StreamRig['next'];
  const until = async (playerId: string, match: (playback: any) => boolean, what: string, timeoutMs = WAIT_MS) => {
    return waitFor(
      async () => {
        const playback = (await api.get(`/api/players/${playerId}/playback`)).body;
        return match(playback) ? playback : undefined;
      },
      timeoutMs,
      { what, changes },
    );
  };
  const fifoPlayer = async (name: string, channel: number) => {
    const fifo = path.join(fifos, `${name.replace(/\W/g, '-')}.pcm`);
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const res = await api.post('/api/players', { name, input: { channel }, output: { kind: 'fifo', path: fifo } });
    if (res.status !== 201) throw new Error(`creating stream player ${name} failed: ${res.status} ${res.text}`);
    const id = res.body.id as string;
    // A player's MPD is up once it has scanned the whole music folder: a test's big folder (thousands of tracks) takes
    // that scan longer than the suite's usual bound on a machine kept busy by a CPU hog, so this wait has its own.
    await until(id, (playback) => playback.engine.state === 'up', `${name}'s MPD to be up`, FIRST_SCAN_WAIT_MS);
    let reader: FifoReader | undefined;
    return {
      id,
      fifo,
      reader: () => {
        if (!reader) readers.push((reader = new FifoReader(fifo)));
        return reader;
      },
    };
  };
  return { d, api, music, events, next, fifoPlayer, until };
}

/** A playlist of `uris` (titles from their names), created through the API; its id and its tracks' ids. */
export async function playlistOf(
  api: Client,
  name: string,
  uris: string[],
): Promise<{ id: string; trackIds: string[] }> {
  const tracks = uris.map((uri) => ({ title: path.basename(uri), uri }));
  const res = await api.post('/api/playlists', { name, tracks });
  if (res.status !== 201) throw new Error(`creating playlist ${name} failed: ${res.status} ${res.text}`);
  return { id: res.body.id, trackIds: res.body.tracks.map((track: { id: string }) => track.id) };
}
