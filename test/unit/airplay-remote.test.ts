// What shairport-sync's metadata pipe says about an AirPlay sender's remote control (DACP), as the AirPlay kind's
// parser reads it, and what a DACP request that fails says: never the session's Active-Remote.
import { createServer } from 'node:http';
import t from 'tap';
import type { ReceiverReport, ReceiverSettings } from '../../drivers/receivers/receiver.js';
import { shairport } from '../../drivers/receivers/shairport.js';

const hex = (text: string) => Buffer.from(text, 'latin1').toString('hex');

/** An `ssnc` item as shairport-sync writes it into the pipe: its head, then its data in base64. */
const item = (code: string, text: string) => [
  `<item><type>${hex('ssnc')}</type><code>${hex(code)}</code><length>${Buffer.byteLength(text)}</length>`,
  '<data encoding="base64">',
  `${Buffer.from(text).toString('base64')}</data></item>`,
];

/** The endpoint reports a fresh parser gives for `items` (each a code and its text), in order. */
function endpoints(items: Array<[string, string]>): unknown[] {
  const parser = shairport.parser();
  const reports: ReceiverReport[] = items.flatMap(([code, text]) =>
    item(code, text).flatMap((line) => parser.line(line, 'metadata')),
  );
  return reports.flatMap((report) => (report.type === 'endpoint' ? [report.endpoint] : []));
}

const SETUP: Array<[string, string]> = [
  ['acre', '2543110914'],
  ['daid', '14413BE4996FEA4D'],
];

t.test('a SETUP with a DACP-ID and an Active-Remote, then the port Avahi found, make the endpoint', async (t) => {
  t.same(endpoints([...SETUP, ['clip', '::ffff:10.0.0.5'], ['dapo', '3689']]), [
    null,
    { host: '10.0.0.5', port: 3689, token: '2543110914' },
  ]);
  t.same(
    endpoints([...SETUP, ['clip', 'fe80::1c2:3fff:fe4a:5b6c'], ['dapo', '50123']]).at(-1),
    { host: 'fe80::1c2:3fff:fe4a:5b6c', port: 50123, token: '2543110914' },
    'an IPv6 sender as it is',
  );
});

t.test('what is not a DACP-ID, an Active-Remote, an address or a port reaches no sender', async (t) => {
  t.same(endpoints([['acre', '25431 10914'], SETUP[1]!, ['clip', '10.0.0.5'], ['dapo', '3689']]), [null, null]);
  t.same(endpoints([SETUP[0]!, ['daid', 'not hex'], ['clip', '10.0.0.5'], ['dapo', '3689']]), [null, null]);
  t.same(endpoints([...SETUP, ['clip', 'sender.local'], ['dapo', '3689']]), [null, null]);
  t.same(endpoints([...SETUP, ['clip', '10.0.0.5'], ['dapo', '0'], ['dapo', '65536'], ['dapo', 'x']]), [null]);
});

const SETTINGS: ReceiverSettings = {
  playerId: 'kitchen',
  name: 'Kitchen',
  output: { kind: 'fifo', path: '/nonexistent' },
  listenHost: '127.0.0.1',
  dir: '/nonexistent',
};

t.test('a DACP request that fails says what and how, not the Active-Remote', async (t) => {
  const remote = shairport.remote!;
  const server = createServer((_request, response) => {
    response.statusCode = 403;
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.listening && new Promise((resolve) => server.close(resolve)));
  const port = (server.address() as { port: number }).port;
  const endpoint = { host: '127.0.0.1', port, token: '2543110914' };
  const refused = await remote.setVolume(endpoint, SETTINGS, 0.5, AbortSignal.timeout(5000)).catch((e: Error) => e);
  t.match(refused, { message: 'the AirPlay sender answered a volume with HTTP 403' });
  const pause = await remote.pause(endpoint, SETTINGS, AbortSignal.timeout(5000)).catch((e: Error) => e);
  t.match(pause, { message: 'the AirPlay sender answered a pause with HTTP 403' });
  await new Promise((resolve) => server.close(resolve));
  const gone = await remote.pause(endpoint, SETTINGS, AbortSignal.timeout(5000)).catch((e: Error) => e);
  t.match(gone, { message: /ECONNREFUSED/ }, 'a sender gone');
  for (const error of [refused, pause, gone])
    t.notOk(String((error as Error).message).includes('2543110914'), 'the token is in no error');
});
