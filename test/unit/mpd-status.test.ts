// Reading MPD's status and the words of its failures (as MPD 0.23 writes them).
import t from 'tap';
import { failedUri, isPlaybackFailure, parseStatus, skipReason } from '../../drivers/mpd/status.js';

t.test('a playing status reads as state, song, position, tags and whether the song decodes', async (t) => {
  const s = parseStatus(
    [
      ['state', 'play'],
      ['songid', '4'],
      ['elapsed', '1.234'],
      ['duration', '3.000'],
      ['playlist', '9'],
      ['audio', '44100:24:2'],
    ],
    [
      ['file', 'a.flac'],
      ['Title', 'A'],
      ['Artist', 'B'],
      ['Album', 'C'],
      ['Name', 'Radio'],
    ],
  );
  t.same(s, {
    state: 'playing',
    songId: 4,
    elapsedMs: 1234,
    durationMs: 3000,
    decoding: true,
    error: null,
    tags: { title: 'A', artist: 'B', album: 'C', name: 'Radio' },
  });
});

t.test('a song whose decoder has not opened it (or failed to) has no audio format: not decoding', async (t) => {
  t.match(
    parseStatus(
      [
        ['state', 'play'],
        ['songid', '5'],
        ['elapsed', '0.000'],
      ],
      [['file', 'gone.flac']],
    ),
    { songId: 5, decoding: false },
  );
});

t.test('a stopped status without a song has no tags, and a stream no duration', async (t) => {
  t.match(parseStatus([['state', 'stop']], []), {
    state: 'stopped',
    songId: null,
    durationMs: null,
    tags: { title: null },
  });
  t.match(
    parseStatus(
      [
        ['state', 'play'],
        ['songid', '1'],
        ['elapsed', '5'],
      ],
      [['file', 'http://x/']],
    ),
    { durationMs: null, elapsedMs: 5000 },
  );
});

const messages = {
  unreachable:
    "Failed to decode http://127.0.0.1:1/x.ogg; CURL failed: Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
  missing: "Failed to decode /music/new.flac; Failed to open '/music/new.flac': No such file or directory",
  unknown: 'Failed to decode tones/garbage.flac',
};

t.test("a failure's reason comes from its cause, not from the URI it names", async (t) => {
  t.equal(skipReason(messages.unreachable), 'unreachable');
  t.equal(skipReason(messages.missing), 'missing');
  t.equal(skipReason(messages.unknown), 'unknown-format');
  t.equal(
    skipReason('Failed to decode http://host/connect-refused.ogg'),
    'unknown-format',
    'the words in the URL do not count',
  );
  t.equal(skipReason('Failed to decode x.flac; something else went wrong'), 'other');
});

t.test("the failed track's URI is read from the message", async (t) => {
  t.equal(failedUri(messages.unreachable), 'http://127.0.0.1:1/x.ogg');
  t.equal(failedUri(messages.missing), '/music/new.flac');
  t.equal(failedUri(messages.unknown), 'tones/garbage.flac');
  t.equal(failedUri('Something else'), null);
});

t.test('only "Failed to decode/open" replies are track failures; other refusals are not', async (t) => {
  t.ok(isPlaybackFailure(messages.unknown));
  t.notOk(isPlaybackFailure('No such song'));
  t.notOk(isPlaybackFailure('Bad song index'));
});
