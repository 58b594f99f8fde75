// The one tone scale of the driver seam: every family's native steps map onto it and back without loss, and a change
// off the scale or for a control the family lacks is refused before anything is recorded.
import t from 'tap';
import { checkTone, type SoundDescription, stepToTone, type ToneScale, toneToStep } from '../../drivers/driver.js';
import { MONOPRICE_SOUND } from '../../drivers/monoprice/protocol.js';
import { RNET_SOUND } from '../../drivers/rnet/protocol.js';
import { XANTECH_SOUND } from '../../drivers/xantech/protocol.js';

const SCALES: Array<[string, ToneScale]> = [
  ['Monoprice and Xantech bass and treble (0..14, 7 flat)', { down: 7, up: 7 }],
  ['Monoprice balance and RNET bass, treble, balance (0..20, 10 centre)', { down: 10, up: 10 }],
  ['Xantech balance (0..63, 32 centre)', { down: 32, up: 31 }],
];

t.test('every native step reads as a value of its own that writes the same step', async (t) => {
  for (const [name, scale] of SCALES) {
    const steps = Array.from({ length: scale.down + scale.up + 1 }, (_, step) => step);
    const values = steps.map((step) => stepToTone(step, scale));
    t.same(
      values.map((value) => toneToStep(value, scale)),
      steps,
      `${name}: round trip`,
    );
    t.equal(new Set(values).size, steps.length, `${name}: no two steps share a value`);
    t.same([values[0], values[scale.down], values.at(-1)], [-1, 0, 1], `${name}: ends at -1 and +1, flat at 0`);
  }
});

t.test('a value between two steps is written as the nearer one', async (t) => {
  t.equal(toneToStep(0.2, { down: 7, up: 7 }), 8, '0.2 of 7 steps is 1.4: one step up');
  t.equal(toneToStep(-0.5, { down: 32, up: 31 }), 16, 'half left on the Xantech balance');
  t.equal(toneToStep(0.5, { down: 32, up: 31 }), 48, 'half right on it (15.5 steps, rounded up)');
});

t.test('each family describes every control and flag, as present or absent with a reason', async (t) => {
  const families: Array<[string, SoundDescription]> = [
    ['monoprice', MONOPRICE_SOUND],
    ['xantech', XANTECH_SOUND],
    ['rnet', RNET_SOUND],
  ];
  for (const [name, sound] of families) {
    for (const has of [...Object.values(sound.controls), ...Object.values(sound.flags)]) {
      t.ok(
        has === true || ('up' in has && has.up > 0) || ('absent' in has && has.absent.length > 0),
        `${name}: ${JSON.stringify(has)}`,
      );
    }
  }
  t.match(MONOPRICE_SOUND.controls.loudness, { absent: /loudness/ }, 'Monoprice has no loudness');
  t.equal(RNET_SOUND.controls.loudness, true, 'RNET has loudness');
});

t.test(
  'checkTone refuses a value off the scale, a wrong type, an unknown or an absent control, naming the fix',
  async (t) => {
    t.doesNotThrow(
      () => checkTone({ bass: -1, treble: 1, balance: 0 }, MONOPRICE_SOUND),
      'the ends of the scale are on it',
    );
    t.throws(() => checkTone({ bass: 1.01 }, MONOPRICE_SOUND), {
      name: 'RangeError',
      message: '"bass" must be a number from -1 to 1 (0 flat), got 1.01',
    });
    t.throws(() => checkTone({ balance: -3 }, MONOPRICE_SOUND), {
      name: 'RangeError',
      message: '"balance" must be a number from -1 to 1 (0 centre), got -3',
    });
    t.throws(() => checkTone({ treble: '0.5' as unknown as number }, MONOPRICE_SOUND), {
      name: 'RangeError',
      message: /"treble" must be a number/,
    });
    t.throws(() => checkTone({ loudness: 1 as unknown as boolean }, RNET_SOUND), {
      name: 'RangeError',
      message: '"loudness" must be true or false, got 1',
    });
    t.throws(() => checkTone({ loudness: true }, XANTECH_SOUND), {
      name: 'RangeError',
      message: 'this amplifier has no loudness control: the Xantech protocol has no loudness command',
    });
    t.throws(() => checkTone({ contour: 1 } as never, RNET_SOUND), {
      name: 'RangeError',
      message: /"contour" is no tone control/,
    });
    t.throws(
      () => checkTone({ bass: 0 }, undefined),
      { name: 'RangeError', message: 'this amplifier has no bass control' },
      'a driver without tone controls',
    );
  },
);
