// Resuming the event stream across a restart of a real daemon process: ids of the run before are never replayed as a gap.

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { type DaemonProcess, startedDaemon } from '../helpers/process.js';
import { eventOf, isEvent, openStream, type SseClient } from '../helpers/sse.js';

t.test('a client that resumes after a restart is told to refetch, then follows the new run', async (t) => {
  const stateDir = tempDir('azc-resume-');
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const args = ['--state-dir', stateDir, '--log-level', 'warn'];
  const streams: SseClient[] = [];
  t.teardown(() => streams.forEach((s) => s.close()));
  const follow = (d: DaemonProcess, headers: Record<string, string>, query = '') => {
    const s = openStream(d.base, `/api/stream/events${query}`, { 'X-API-Key': key(), ...headers });
    streams.push(s);
    return s;
  };
  const key = () => /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
  /** Sets the first zone's volume `times` times; each change is one zone.volumeChanged event. */
  const turn = async (d: DaemonProcess, times: number, from: number) => {
    const api = client(d.base, key());
    const zone = (await api.get('/api/zones')).body[0].id as string;
    for (let i = 1; i <= times; i++)
      t.equal((await api.put(`/api/zones/${zone}/volume`, { volume: (from + i) / 100 })).status, 204);
  };

  // The first run: a client follows five changes and remembers the last id, as EventSource does.
  const first = await startedDaemon(t, { args });
  const before = follow(first, {});
  await before.next((m) => m.retry !== undefined, 5000, 'the first stream to open');
  await turn(first, 5, 0);
  const fifth = await before.next(
    isEvent('zone.volumeChanged', (p) => p.volume === 0.05),
    5000,
    'the fifth change',
  );
  const seen = fifth.id!;
  before.close();
  t.same(await first.stop(), { code: 0, signal: null }, 'the first run stopped cleanly');

  // The second run numbers its events from 1 again: it makes changes until its count passes the old id's, so that
  // events after that number exist in the new run too (what a resume by number alone would replay as if missed).
  const second = await startedDaemon(t, { args });
  const watcher = follow(second, {});
  const number = (id: string) => Number(/(\d+)$/.exec(id)![1]);
  let last = 0;
  for (let i = 1; i <= 200 && last < number(seen) + 4; i++) {
    await turn(second, 1, i % 90);
    const changed = await watcher.next(
      isEvent('zone.volumeChanged', (p) => p.volume === ((i % 90) + 1) / 100),
      5000,
      `change ${i} of the second run`,
    );
    last = number(changed.id!);
    watcher.messages.length = 0;
  }
  watcher.close();
  t.ok(last >= number(seen) + 4, `the second run numbered events past ${seen}`);

  for (const [label, headers, query] of [
    ['Last-Event-ID header', { 'Last-Event-ID': seen }, ''],
    ['?lastEventId=', {}, `?lastEventId=${encodeURIComponent(seen)}`],
  ] as const) {
    const s = follow(second, headers, query);
    const firstEvent = await s.next((m) => m.data !== undefined, 5000, `the first event after resuming (${label})`);
    t.match(
      eventOf(firstEvent),
      { type: 'stream.reset', payload: { reason: /restarted/ } },
      `${label}: the first message is stream.reset`,
    );
    t.notOk(
      s.messages.some(isEvent('zone.volumeChanged')),
      `${label}: no event of the new run passes for one after ${seen}`,
    );
    t.not(firstEvent.id, seen, `${label}: the reset carries an id of the new run`);
    s.close();
  }

  // A client that took the reset's id resumes from it without another reset, and sees the next change.
  const reset = follow(second, { 'Last-Event-ID': seen });
  const resetId = (await reset.next(isEvent('stream.reset'), 5000, 'the reset')).id!;
  reset.close();
  const resumed = follow(second, { 'Last-Event-ID': resetId });
  await resumed.next((m) => m.retry !== undefined, 5000, 'the resumed stream to open');
  await turn(second, 1, 50);
  const next = await resumed.next(
    isEvent('zone.volumeChanged', (p) => p.volume === 0.51),
    5000,
    'the change after the reset',
  );
  t.notOk(resumed.messages.some(isEvent('stream.reset')), 'no second reset');
  t.not(next.id, resetId);
  t.same(await second.stop(), { code: 0, signal: null });
});
