// The daemon tells its drivers whether anyone watches: an event-stream client connected or not (docs/drivers.md).
import t from 'tap';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { openStream } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait-for.js';

/** The simulated amplifier, recording each watching() hint it is given. */
class WatchedDriver extends SimulatedDriver {
  readonly hints: boolean[] = [];
  watching(watched: boolean): void {
    this.hints.push(watched);
  }
}

t.test(
  'a driver is told someone watches while an event stream is open, and that nobody does once the last one ends',
  async (t) => {
    const driver = new WatchedDriver({ applyDelayMs: 1 });
    const d = await startTestDaemon(t, { driver });
    t.same(driver.hints, [], 'no hint before any stream');
    const first = openStream(d.base, '/api/stream/events', { authorization: `Bearer ${d.adminKey}` });
    t.teardown(() => first.close());
    await first.next((m) => m.retry !== undefined, undefined, 'the first stream open');
    await waitFor(() => driver.hints.at(-1) === true, undefined, { what: 'the watching hint' });
    const second = openStream(d.base, '/api/stream/events', { authorization: `Bearer ${d.adminKey}` });
    t.teardown(() => second.close());
    await second.next((m) => m.retry !== undefined, undefined, 'the second stream open');
    first.close();
    await waitFor(() => driver.hints.length >= 3, undefined, { what: 'the hint after the first stream ended' });
    t.same(driver.hints, [true, true, true], 'still watched while one stream is open');
    second.close();
    await waitFor(() => driver.hints.at(-1) === false, undefined, { what: 'the hint after the last stream ended' });
  },
);
