// The dashboard's event-stream client (daemon/ui/js/stream.js) run in Node against a real daemon:
// SSE parsing, resume with Last-Event-ID, stream.reset after a gap, and the 401 that ends a session.

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { UI_DIR } from '../../daemon/paths.js';
import { client } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

interface UiEvent {
  type: string;
  payload: any;
}

interface StreamModule {
  followEvents(options: {
    url: string;
    token: () => string | null;
    onOpen: (resumed: boolean) => void;
    onEvent: (event: UiEvent) => void;
    onState: (state: string) => void;
    onUnauthorized: () => void;
  }): { stop(): void };
}

/** Resolves when `check` holds; re-checked whenever the client reports something. */
function watcher() {
  const changes = new Changes();
  return {
    poke: () => changes.notify(),
    async until(check: () => boolean, what: string): Promise<void> {
      await waitFor(check, undefined, { what, changes });
    },
  };
}

t.test('the dashboard stream client', async (t) => {
  // A short retry and a small replay ring make reconnects and gaps quick to provoke.
  const sse = { ...defaultConfig().sse, retryMs: 20, replayEvents: 16 };
  const d = await startTestDaemon(t, { config: { sse } });
  const api = client(d.base, d.adminKey);
  const login = await api.post('/api/auth/login', { username: 'admin', password: d.adminPassword });
  const token: string = login.body.token;
  const { followEvents } = (await import(pathToFileURL(path.join(UI_DIR, 'js', 'stream.js')).href)) as StreamModule;

  const events: UiEvent[] = [];
  const opened: boolean[] = [];
  const states: string[] = [];
  let unauthorized = 0;
  const w = watcher();
  const stream = followEvents({
    url: `${d.base}/api/stream/events`,
    token: () => token,
    onOpen: (resumed) => {
      opened.push(resumed);
      w.poke();
    },
    onEvent: (event) => {
      events.push(event);
      w.poke();
    },
    onState: (state) => {
      states.push(state);
      w.poke();
    },
    onUnauthorized: () => {
      unauthorized++;
      w.poke();
    },
  });
  t.teardown(() => stream.stop());
  const zoneId: string = (await api.get('/api/zones')).body[0].id;
  const volumes = () => events.filter((e) => e.type === 'zone.volumeChanged').map((e) => e.payload.volume as number);

  t.test('it parses events into {type, payload}', async (t) => {
    await w.until(() => opened.length === 1, 'the stream to open');
    t.same(opened, [false], 'the first connection sends no Last-Event-ID');
    await api.put(`/api/zones/${zoneId}/volume`, { volume: 0.5 });
    await w.until(() => volumes().includes(0.5), 'the volume event');
    t.match(events.at(-1), { type: 'zone.volumeChanged', payload: { zoneId, volume: 0.5 } });
  });

  t.test('after the server ends the stream it resumes with Last-Event-ID and misses nothing', async (t) => {
    d.daemon.services.streams.closeAll();
    // Published while the client is away: it must come from the replay ring, exactly once.
    d.daemon.services.bus.publish({ type: 'zone.volumeChanged', payload: { zoneId, volume: 0.61 } });
    await w.until(() => opened.length === 2, 'the reconnect');
    t.equal(opened[1], true, 'the reconnect sent Last-Event-ID');
    await w.until(() => volumes().includes(0.61), 'the missed event');
    await api.put(`/api/zones/${zoneId}/volume`, { volume: 0.62 });
    await w.until(() => volumes().includes(0.62), 'a live event after the resume');
    t.same(volumes(), [0.5, 0.61, 0.62], 'each event once, in order');
    t.ok(states.includes('reconnecting'), 'it said it was reconnecting');
    t.equal(states.at(-1), 'live');
  });

  t.test('a gap larger than the replay ring yields stream.reset', async (t) => {
    d.daemon.services.streams.closeAll();
    for (let i = 0; i < 40; i++)
      d.daemon.services.bus.publish({ type: 'hardware.status', payload: { driver: 'simulated', online: true } });
    await w.until(() => events.some((e) => e.type === 'stream.reset'), 'stream.reset');
    t.equal(events.filter((e) => e.type === 'stream.reset').length, 1, 'the client is told to refetch, once');
  });

  t.test('a 401 on reconnect (the session ended) stops the client and reports it', async (t) => {
    await api.post('/api/auth/logout', undefined, { token });
    await w.until(() => unauthorized === 1, 'the 401');
    const before = opened.length;
    await api.put(`/api/zones/${zoneId}/volume`, { volume: 0.7 });
    t.equal(opened.length, before, 'no further reconnects');
    t.notOk(volumes().includes(0.7), 'no events after sign-out');
  });
});
