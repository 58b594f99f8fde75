// The events the dashboard's store handles against the one definition of the events the daemon sends.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { UI_DIR } from '../../daemon/paths.js';
import { DomainEventSchema } from '../../daemon/domain/shared/events.js';

const sent: string[] = DomainEventSchema.anyOf.map((e) => (e.properties.type as { const: string }).const);
const store = readFileSync(path.join(UI_DIR, 'js', 'store.js'), 'utf8');
const handled = [...store.matchAll(/case '([\w.]+)':/g)].map((m) => m[1]!);

/** Events the dashboard shows nothing of: its own export answer says where the file went; the library is read when opened. */
const NOT_SHOWN = ['playlist.exported', 'library.scanChanged'];

t.test('the dashboard handles only events the daemon sends', async (t) => {
  t.ok(handled.length > 20, `${handled.length} events read from store.js`);
  t.same(
    handled.filter((type) => !sent.includes(type)),
    [],
  );
});

t.test('the dashboard handles every event the daemon sends, but those it shows nothing of', async (t) => {
  t.same(
    sent.filter((type) => !handled.includes(type) && !NOT_SHOWN.includes(type)),
    [],
  );
  t.same(
    NOT_SHOWN.filter((type) => handled.includes(type) || !sent.includes(type)),
    [],
    'and the list of those is current',
  );
});
