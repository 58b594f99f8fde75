// Who holds a stream player's output (daemon/domain/playback/cast-arbiter.ts), as a table: each row a sequence of what
// happened, the actions the arbiter asked for at each step, and who holds the output at the end.
import t from 'tap';
import {
  type ArbiterAction,
  CastArbiter,
  type CastKind,
  type OutputHolder,
} from '../../daemon/domain/playback/cast-arbiter.js';

type Step = ['cast', CastKind] | ['castEnd', CastKind] | ['play'] | ['mpdStop'] | ['announce'] | ['announced'];

/** Actions written short: "pause", "end airplay", "select upnp", "select none". */
const said = (actions: ArbiterAction[]) =>
  actions.map((a) =>
    a.do === 'pauseMpd' ? 'pause' : a.do === 'endCast' ? `end ${a.kind}` : `select ${a.source ?? 'none'}`,
  );

function run(steps: Step[]): { actions: string[][]; holder: OutputHolder } {
  const arbiter = new CastArbiter();
  const actions = steps.map((step) => {
    switch (step[0]) {
      case 'cast':
        return said(arbiter.castStarted(step[1]));
      case 'castEnd':
        return said(arbiter.castEnded(step[1]));
      case 'play':
        return said(arbiter.mpdStarted());
      case 'mpdStop':
        return said(arbiter.mpdStopped());
      case 'announce':
        return said(arbiter.announcementStarted());
      case 'announced':
        return said(arbiter.announcementEnded());
    }
  });
  return { actions, holder: arbiter.holder };
}

const ROWS: Array<{ name: string; steps: Step[]; actions: string[][]; holder: OutputHolder }> = [
  {
    name: 'a cast that begins while the playlist plays pauses the playlist and takes the output',
    steps: [['play'], ['cast', 'airplay']],
    actions: [[], ['pause', 'select airplay']],
    holder: 'airplay',
  },
  {
    name: 'Play pressed during a cast ends the cast and gives the output back to MPD',
    steps: [['cast', 'upnp'], ['play']],
    actions: [['select upnp'], ['end upnp', 'select none']],
    holder: 'mpd',
  },
  {
    name: 'a second cast takes over from the first',
    steps: [
      ['cast', 'airplay'],
      ['cast', 'squeezelite'],
    ],
    actions: [['select airplay'], ['end airplay', 'select squeezelite']],
    holder: 'squeezelite',
  },
  {
    name: 'a cast that ends leaves the output to nobody; the paused playlist stays paused',
    steps: [['play'], ['cast', 'airplay'], ['castEnd', 'airplay']],
    actions: [[], ['pause', 'select airplay'], ['select none']],
    holder: null,
  },
  {
    name: 'the end of a cast that lost the output changes nothing',
    steps: [
      ['cast', 'airplay'],
      ['cast', 'upnp'],
      ['castEnd', 'airplay'],
    ],
    actions: [['select airplay'], ['end airplay', 'select upnp'], []],
    holder: 'upnp',
  },
  {
    name: 'a cast reported twice is one cast',
    steps: [
      ['cast', 'upnp'],
      ['cast', 'upnp'],
    ],
    actions: [['select upnp'], []],
    holder: 'upnp',
  },
  {
    name: 'an announcement during a cast takes the output and gives it back to the cast',
    steps: [['cast', 'airplay'], ['announce'], ['announced']],
    actions: [['select airplay'], ['select none'], ['select airplay']],
    holder: 'airplay',
  },
  {
    name: 'an announcement over the playlist leaves the output to MPD, which plays it and gets its playback back',
    steps: [['play'], ['announce'], ['announced']],
    actions: [[], [], []],
    holder: 'mpd',
  },
  {
    name: 'a cast that begins during an announcement over the playlist gets the output after it, and MPD pauses then',
    steps: [['play'], ['announce'], ['cast', 'squeezelite'], ['announced']],
    actions: [[], [], [], ['pause', 'select squeezelite']],
    holder: 'squeezelite',
  },
  {
    name: 'a cast that begins and ends during an announcement still paused the playlist',
    steps: [['play'], ['announce'], ['cast', 'upnp'], ['castEnd', 'upnp'], ['announced']],
    actions: [[], [], [], [], ['pause']],
    holder: null,
  },
  {
    name: 'Play pressed during an announcement over a cast ends the cast; MPD has the output after it',
    steps: [['cast', 'airplay'], ['announce'], ['play'], ['announced']],
    actions: [['select airplay'], ['select none'], ['end airplay'], []],
    holder: 'mpd',
  },
  {
    name: 'Play pressed during an announcement after a cast began in it: the playlist is not paused afterwards',
    steps: [['play'], ['announce'], ['cast', 'airplay'], ['play'], ['announced']],
    actions: [[], [], [], ['end airplay'], []],
    holder: 'mpd',
  },
  {
    name: 'a playlist that stopped by itself holds nothing: a cast then pauses no one',
    steps: [['play'], ['mpdStop'], ['cast', 'airplay']],
    actions: [[], [], ['select airplay']],
    holder: 'airplay',
  },
];

for (const row of ROWS)
  t.test(row.name, async (t) => {
    const { actions, holder } = run(row.steps);
    t.same(actions, row.actions, 'the actions at each step');
    t.equal(holder, row.holder, 'who holds the output at the end');
  });
