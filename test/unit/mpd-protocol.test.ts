// MPD's text protocol without a socket: quoting, command lists, and replies cut anywhere.
import t from 'tap';
import {
  command,
  encodeRequest,
  field,
  type MpdAck,
  quote,
  type Reply,
  ReplyParser,
  records,
} from '../../drivers/mpd/protocol.js';

function parse(chunks: string[]): Array<{ reply: Reply; greeting?: string }> {
  const out: Array<{ reply: Reply; greeting?: string }> = [];
  const parser = new ReplyParser((reply, greeting) =>
    out.push(greeting === undefined ? { reply } : { reply, greeting }),
  );
  for (const chunk of chunks) parser.push(chunk);
  return out;
}

t.test('arguments are quoted with their quotes and backslashes escaped', async (t) => {
  t.equal(quote('a "b" \\ c'), '"a \\"b\\" \\\\ c"');
  t.equal(command('addid', 'x y.flac', 3), 'addid "x y.flac" "3"');
});

t.test('an argument with a line break is refused, since it would end the command', async (t) => {
  t.throws(() => quote('a\nplay'), /line break/);
});

t.test('several commands go as one command list that answers each with list_OK', async (t) => {
  t.equal(encodeRequest(['status']), 'status\n');
  t.equal(encodeRequest(['status', 'currentsong']), 'command_list_ok_begin\nstatus\ncurrentsong\ncommand_list_end\n');
});

t.test('the greeting is a reply that carries the protocol version', async (t) => {
  const [first] = parse(['OK MPD 0.23.5\n']);
  t.same(first, { reply: { ok: true, results: [[]] }, greeting: '0.23.5' });
});

t.test('a reply cut anywhere, even inside a line, parses as if it came whole', async (t) => {
  const text = 'state: play\nsongid: 7\nOK\nfile: a.flac\nOK\n';
  const whole = parse([text]);
  for (let cut = 1; cut < text.length; cut++) {
    t.same(parse([text.slice(0, cut), text.slice(cut)]), whole, `cut at ${cut}`);
  }
  t.same(
    whole.map((r) => r.reply),
    [
      {
        ok: true,
        results: [
          [
            ['state', 'play'],
            ['songid', '7'],
          ],
        ],
      },
      { ok: true, results: [[['file', 'a.flac']]] },
    ],
  );
});

t.test('a command list answers one set of pairs per command', async (t) => {
  const [only] = parse(['Id: 1\nlist_OK\nId: 2\nlist_OK\nOK\n']);
  t.same(only!.reply, { ok: true, results: [[['Id', '1']], [['Id', '2']], []] });
});

t.test('an ACK names the refused command, its place in the list, and keeps the replies before it', async (t) => {
  const [only] = parse(['Id: 1\nlist_OK\nACK [50@1] {addid} No such song\n']);
  t.equal(only!.reply.ok, false);
  const ack = (only!.reply as { ack: MpdAck }).ack;
  t.match(ack, { code: 50, index: 1, command: 'addid', text: 'No such song', completed: [[['Id', '1']]] });
  t.match(ack.message, /MPD refused addid: No such song/);
});

t.test('lines that are not the protocol are dropped without derailing the replies after them', async (t) => {
  const replies = parse(['garbage without colon\nstate: stop\nOK\n']);
  t.same(
    replies.map((r) => r.reply),
    [{ ok: true, results: [[['state', 'stop']]] }],
  );
});

t.test('a listing splits into records at each file or directory', async (t) => {
  const pairs: Array<[string, string]> = [
    ['directory', 'x'],
    ['file', 'x/a.flac'],
    ['Title', 'A'],
    ['file', 'x/b.flac'],
  ];
  t.same(records(pairs, ['file', 'directory']), [
    [['directory', 'x']],
    [
      ['file', 'x/a.flac'],
      ['Title', 'A'],
    ],
    [['file', 'x/b.flac']],
  ]);
  t.equal(field(pairs, 'Title'), 'A');
  t.equal(field(pairs, 'Album'), undefined);
});
