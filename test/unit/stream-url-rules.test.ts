// Where a stream player may fetch a stream from: http(s) on a usual port (80, 443, 8000–8999) of a host other than
// this appliance, or a host or host:port playback.streamHosts names; checked without any network.
import t from 'tap';
import { loadConfig } from '../../daemon/config.js';
import { parseTrackUri, STREAM_PORTS } from '../../drivers/playback-uri.js';
import { errorOf } from '../helpers/config-files.js';

const refusal = (uri: string, hosts: readonly string[] = []) => {
  try {
    parseTrackUri(uri, hosts);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
};

t.test('streams on the ports radio is served on are accepted', async (t) => {
  t.same(STREAM_PORTS, { usual: [80, 443], from: 8000, to: 8999 });
  for (const uri of [
    'http://radio.example/live',
    'https://radio.example/live',
    'http://radio.example:8000/jazz.ogg',
    'http://192.168.1.20:8999/x',
    'https://radio.example:443/y',
  ]) {
    t.equal(refusal(uri), 'accepted', uri);
  }
});

t.test('a stream on another port is refused, naming the port, the accepted ones and the allow-list', async (t) => {
  for (const [uri, port] of [
    ['http://192.168.1.1:22/', 22],
    ['http://nas.lan:7999/x', 7999],
    ['https://printer.lan:9000/', 9000],
    ['http://db.lan:5432/', 5432],
  ] as const) {
    t.match(
      refusal(uri),
      new RegExp(
        `is on port ${port}: streams play from ports 80, 443 and 8000–8999; ask an admin to add its host \\(or host:port\\) to playback\\.streamHosts`,
      ),
      uri,
    );
  }
});

t.test('a stream on this appliance is refused however its address is written', async (t) => {
  for (const uri of [
    'http://localhost/x',
    'http://LOCALHOST:8080/api/health',
    'http://127.0.0.1:8080/',
    'http://127.1.2.3/',
    'http://[::1]:8000/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0:8000/',
    'http://mpd.localhost/',
  ]) {
    t.match(
      refusal(uri),
      /is on this appliance \(.*\): streams come from radio stations on the network; ask an admin/,
      uri,
    );
  }
});

t.test('playback.streamHosts allows a host on any port, or one host:port', async (t) => {
  t.equal(refusal('http://127.0.0.1:45000/radio.ogg', ['127.0.0.1']), 'accepted', 'a host: any port');
  t.equal(refusal('http://Radio.LAN:9000/x', ['radio.lan:9000']), 'accepted', 'host:port, in any case');
  t.match(
    refusal('http://radio.lan:9001/x', ['radio.lan:9000']),
    /is on port 9001/,
    'another port of that host is not',
  );
  t.equal(refusal('http://[::1]:9000/x', ['[::1]:9000']), 'accepted', 'IPv6 in brackets');
  t.equal(refusal('http://radio.lan/x', ['radio.lan:80']), 'accepted', "a URL's default port counts as written");
});

t.test('without a list (a playlist being saved) only the form is checked', async (t) => {
  t.same(parseTrackUri('http://127.0.0.1:22/x'), { kind: 'stream', url: 'http://127.0.0.1:22/x' });
});

t.test(
  'playback.streamHosts takes host names and addresses with or without a port, and refuses anything else',
  async (t) => {
    t.same(
      loadConfig(['--playback-stream-hosts', 'radio.lan,192.168.1.20:8443,[fd00::5]:9000'], {}, '/srv/azcd').config
        .playback.streamHosts,
      ['radio.lan', '192.168.1.20:8443', '[fd00::5]:9000'],
    );
    t.same(loadConfig([], {}, '/srv/azcd').config.playback.streamHosts, [], 'none by default');
    t.match(
      errorOf(() => loadConfig(['--playback-stream-hosts', 'http://radio.lan/'], {}, '/srv/azcd')),
      /--playback-stream-hosts.*each entry must be a host name or address, with :port or not .*got "http:\/\/radio\.lan\/"/,
    );
    t.match(
      errorOf(() => loadConfig(['--playback-stream-hosts', 'radio.lan:0'], {}, '/srv/azcd')),
      /got "radio\.lan:0"/,
    );
  },
);
