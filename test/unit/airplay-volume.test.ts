// The sender's volume as the AirPlay kind's parser reads it from shairport-sync's metadata pipe (`pvol`): when a
// stream begins, shairport-sync reports the volume it held (the last session's, or its default of −18 dB) from its
// player thread, racing the new sender's own; that report is not the sender's and is not told, on either side of it.
import t from 'tap';
import type { ReceiverReport } from '../../drivers/receivers/receiver.js';
import { shairport } from '../../drivers/receivers/shairport.js';

const hex = (text: string) => Buffer.from(text, 'latin1').toString('hex');

/** The volumes (0..1) a fresh parser tells for `items`: `pbeg`, or a `pvol` of that many dB. */
function volumes(items: Array<'pbeg' | number>): number[] {
  const parser = shairport.parser();
  const reports: ReceiverReport[] = items.flatMap((item) => {
    const [code, text] = item === 'pbeg' ? ['pbeg', ''] : ['pvol', `${item.toFixed(2)},0.00,0.00,0.00`];
    const head = `<item><type>${hex('ssnc')}</type><code>${hex(code)}</code><length>${Buffer.byteLength(text)}</length>`;
    const lines = text
      ? [head, '<data encoding="base64">', `${Buffer.from(text).toString('base64')}</data></item>`]
      : [`${head}</item>`];
    return lines.flatMap((line) => parser.line(line, 'metadata'));
  });
  return reports.flatMap((report) => (report.type === 'volume' ? [report.volume] : []));
}

t.test("shairport-sync's held volume reported when the stream begins is not the sender's", async (t) => {
  t.same(volumes(['pbeg', -18, -24]), [0.2], 'the default before the sender’s −24 dB');
  t.same(volumes(['pbeg', -24, -18]), [0.2], 'the default after it, as the two threads race');
  t.same(volumes([-24, 'pbeg', -24]), [0.2], 'a sender that gave its volume before the stream began, told once');
  t.same(volumes(['pbeg', -18]), [], 'a sender that gives none: nothing, rather than the default');
  t.same(volumes(['pbeg', -18, -24, -9]), [0.2, 0.7], 'later changes are told');
});

t.test("the next session's stream begins with the last session's volume held, which is not told", async (t) => {
  t.same(volumes(['pbeg', -18, -9, 'pbeg', -9, -24]), [0.7, 0.2]);
  t.same(volumes(['pbeg', -18, -9, 'pbeg', -24, -9]), [0.7, 0.2], 'on either side of the new sender’s');
});

t.test(
  'where the player thread read the sender’s volume already, a later change to the held one is told',
  async (t) => {
    t.same(volumes([-9, 'pbeg', -24, -24, -9]), [0.7, 0.2, 0.2, 0.7]);
  },
);

t.test('a sender whose volume is the one held is told it once', async (t) => {
  t.same(volumes(['pbeg', -18, -18]), [0.4]);
});
