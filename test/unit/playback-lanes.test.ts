// A stream player's operations run one after another in its one lane (NowPlaying.serially): a transport command waits
// for the one before it, engine answer included, a failed one does not hold up the next, and a player deleted takes
// what it played along. The engine here is a stand-in that records its calls; the lanes are the domain's own.
import t, { type Test } from 'tap';
import { StreamEngines, Transport } from '../../daemon/domain/playback/index.js';
import { NowPlaying } from '../../daemon/domain/playback/now-playing.js';
import { type Caller, EventBus, type PlayerView, systemClock } from '../../daemon/domain/shared/index.js';
import { createLogger } from '../../daemon/log.js';
import { type PlaybackEngine, stoppedStatus } from '../../drivers/playback.js';
import { within } from '../helpers/wait-for.js';

const PLAYER = '6f1c2c8e-4a55-4b1e-9b53-7f0e2f6a1a01';
const admin: Caller = {
  userId: 'a1',
  username: 'admin',
  role: 'Admin',
  playerIds: new Set(),
  zoneIds: new Set(),
  credential: { kind: 'account' },
};
const STOPPED = stoppedStatus();

/** An engine whose playUri answers only when the test lets it (or fails when told to); every call is written down. */
function recordingEngine() {
  const calls: string[] = [];
  let answer!: (failure?: Error) => void;
  let started!: () => void;
  const playStarted = new Promise<void>((resolve) => (started = resolve));
  const engine = {
    id: PLAYER,
    up: true,
    start: async () => undefined,
    stop: async () => undefined,
    onEvent: () => () => undefined,
    status: () => STOPPED,
    playUri: (uri: string) => {
      calls.push(`playUri ${uri}`);
      started();
      return new Promise<void>((resolve, reject) => {
        answer = (failure) => {
          calls.push(`playUri ${uri} answered`);
          if (failure) reject(failure);
          else resolve();
        };
      });
    },
    pause: async () => {
      calls.push('pause');
    },
  };
  return {
    engine: engine as unknown as PlaybackEngine,
    calls,
    playStarted,
    answer: (failure?: Error) => answer(failure),
  };
}

async function rig(t: Test) {
  const recording = recordingEngine();
  const bus = new EventBus();
  const engines = new StreamEngines(
    {
      factory: () => recording.engine,
      missing: () => undefined,
      folderOf: () => '/nonexistent',
      musicDir: '/nonexistent',
      createMusicDir: false,
      log: createLogger('silent'),
    },
    (playerId, event) => now.handle(playerId, event),
  );
  const now = new NowPlaying(engines, bus, systemClock);
  const player = { id: PLAYER, name: 'Lounge', output: { kind: 'null' } } as PlayerView;
  const transport = new Transport(
    engines,
    now,
    { get: () => player },
    { get: () => t.fail('no playlist is asked') as never },
  );
  await engines.set(PLAYER, { kind: 'null' });
  await engines.ready(PLAYER);
  t.teardown(() => engines.stopAll());
  return { ...recording, bus, now, transport };
}

/** Lets every callback already due run (promise continuations included): what is not queued behind something has run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

t.test(
  'a command sent while the one before waits for its engine reaches the engine only after that answer',
  async (t) => {
    const { transport, calls, playStarted, answer } = await rig(t);
    const playing = transport.play(admin, PLAYER, { uri: 'http://radio.example/a' });
    const pausing = transport.pause(admin, PLAYER);
    await within(playStarted, undefined, 'the play to reach the engine');
    await turn();
    t.same(calls, ['playUri http://radio.example/a'], 'the pause waits in the lane');
    answer();
    await within(Promise.all([playing, pausing]), undefined, 'both commands to answer');
    t.same(calls, ['playUri http://radio.example/a', 'playUri http://radio.example/a answered', 'pause']);
  },
);

t.test('a command that fails does not hold up the next one on the player', async (t) => {
  const { transport, calls, playStarted, answer } = await rig(t);
  const playing = transport.play(admin, PLAYER, { uri: 'http://radio.example/a' });
  const pausing = transport.pause(admin, PLAYER);
  await within(playStarted, undefined, 'the play to reach the engine');
  answer(new Error('the stream cannot be fetched'));
  await t.rejects(playing);
  await within(pausing, undefined, 'the pause to answer');
  t.same(calls, ['playUri http://radio.example/a', 'playUri http://radio.example/a answered', 'pause']);
});

t.test('a player deleted: what it played is forgotten, last', async (t) => {
  const { transport, now, bus, playStarted, answer } = await rig(t);
  const playing = transport.play(admin, PLAYER, { uri: 'http://radio.example/a' });
  await within(playStarted, undefined, 'the play to reach the engine');
  answer();
  await within(playing, undefined, 'the play to answer');
  t.same(now.session(PLAYER)?.trackIds, [null], 'the URI is the session');
  // Subscribed after NowPlaying, as the announcements and the engines' follower are: they still hear it first.
  let sessionWhenServicesHeard: unknown;
  bus.subscribe('services', (event) => {
    if (event.type === 'player.deleted') sessionWhenServicesHeard = now.session(PLAYER);
  });
  bus.publish({ type: 'player.deleted', payload: { playerId: PLAYER } });
  t.ok(sessionWhenServicesHeard, 'the services that stop its announcement and its engine hear it while it is there');
  t.equal(now.session(PLAYER), undefined, 'then it is forgotten');
});
