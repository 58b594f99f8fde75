// The JSON shapes of resources, as schemas: the API documents them and the types below derive from them.
import { type Static, Type as T } from '@sinclair/typebox';

const Binding = (what: string) =>
  T.Object({
    amplifier: T.String({
      description: 'name of the configured amplifier (its driver name when a single one is configured by --driver)',
    }),
    driver: T.String({ description: 'amplifier driver name' }),
    channel: T.Integer({ description: what }),
  });

/** Whether the thing can take writes now, and why not (every view of a zone, player or input device carries both). */
const availability = (what: string, when: string) => ({
  available: T.Boolean({ description: `false while ${what} cannot take writes (${when}); writes then answer 409` }),
  unavailableReason: T.Union([T.String(), T.Null()], {
    description:
      'why not, naming the amplifier and its unit (or that the amplifier is not configured); null while available',
  }),
});

/**
 * Where a stream player's audio goes: an ALSA device of the appliance (a DAC wired into the amplifier input), a FIFO
 * someone else reads (raw PCM, 44.1 kHz 16-bit stereo: a Snapcast source, tests), or nowhere (played in real time).
 */
export const StreamOutputSchema = T.Union(
  [
    T.Object({
      kind: T.Literal('alsa'),
      device: T.String({ description: 'the ALSA device as aplay -L names it, e.g. hw:CARD=sndrpihifiberry,DEV=0' }),
    }),
    T.Object({
      kind: T.Literal('fifo'),
      path: T.String({ description: 'absolute path of the FIFO the PCM is written to' }),
    }),
    T.Object({ kind: T.Literal('null') }),
  ],
  { title: 'StreamOutput' },
);

export const PlayerSchema = T.Object({
  id: T.String({ format: 'uuid' }),
  name: T.String(),
  volume: T.Number({
    minimum: 0,
    maximum: 1,
    format: 'double',
    description:
      'group volume, 0.5 = 50%: the average of all attached zones; a player without zones keeps its last value',
  }),
  zoneIds: T.Array(T.String({ format: 'uuid' }), { description: 'attached zones the caller may see' }),
  input: Binding('amplifier source input the player feeds'),
  output: T.Union([StreamOutputSchema, T.Null()], {
    description:
      "a stream player's audio output (the appliance plays it, see /api/players/{id}/playback); null: a device wired to the input",
  }),
  state: T.Union([T.Literal('playing'), T.Literal('idle')], {
    description:
      'a stream player: playing while it plays (not paused or stopped); any other player: playing when an attached zone is on and unmuted',
  }),
  ...availability('the player', "its input's amplifier is not configured"),
});

const ToneValue = (what: string) =>
  T.Union([T.Number({ minimum: -1, maximum: 1, format: 'double' }), T.Null()], {
    description: `${what}; null where the zone's amplifier lacks the control`,
  });

/** A zone's tone on the one scale of every amplifier family (docs/drivers.md says how each family's steps map to it). */
export const ZoneToneSchema = T.Object(
  {
    bass: ToneValue('-1 full cut, 0 flat, 1 full boost'),
    treble: ToneValue('-1 full cut, 0 flat, 1 full boost'),
    balance: ToneValue('-1 full left, 0 centre, 1 full right'),
    loudness: T.Union([T.Boolean(), T.Null()], {
      description: "loudness compensation on or off; null where the zone's amplifier lacks it",
    }),
  },
  { title: 'ZoneTone' },
);

const Lacking = T.Object({
  available: T.Literal(false),
  reason: T.String({ description: "why the zone's amplifier has no such control, in the driver's words" }),
});
const SteppedControl = T.Union([
  T.Object({
    available: T.Literal(true),
    down: T.Integer({ minimum: 1, description: 'native steps from flat (centre) to full cut (left)' }),
    up: T.Integer({ minimum: 1, description: 'native steps from flat (centre) to full boost (right)' }),
  }),
  Lacking,
]);

/** Which tone controls the zone's amplifier has, and for each one it lacks, why. */
export const ToneControlsSchema = T.Object({
  bass: SteppedControl,
  treble: SteppedControl,
  balance: SteppedControl,
  loudness: T.Union([T.Object({ available: T.Literal(true) }), Lacking]),
});

const Flag = (what: string) =>
  T.Union([T.Boolean(), T.Null()], {
    description: `${what}; null where the amplifier does not report it (or has not yet)`,
  });

/** What the amplifier reports about the zone by itself (read-only). */
export const AmplifierStatusSchema = T.Object(
  {
    paging: Flag('a page is in progress on the amplifier (it overrides the zone while it lasts)'),
    doNotDisturb: Flag('do-not-disturb is set on the amplifier'),
    party: Flag('party mode is on'),
  },
  { title: 'AmplifierStatus' },
);

export const ZoneSchema = T.Object({
  id: T.String({ format: 'uuid' }),
  name: T.String(),
  volume: T.Number({ minimum: 0, maximum: 1, format: 'double' }),
  muted: T.Boolean(),
  power: T.Boolean(),
  playerId: T.Union([T.String({ format: 'uuid' }), T.Null()], {
    description: 'the player routed here, if visible to the caller',
  }),
  output: Binding('amplifier zone output'),
  maxVolume: T.Number({
    minimum: 0,
    maximum: 1,
    format: 'double',
    description: 'the most this zone ever plays at; higher requests are clamped to it',
  }),
  turnOnVolume: T.Union([T.Number({ minimum: 0, maximum: 1, format: 'double' }), T.Null()], {
    description:
      'the volume the zone starts at whenever it powers on (at most maxVolume); null keeps the volume it had',
  }),
  sleepUntil: T.Union([T.String({ format: 'date-time' }), T.Null()], {
    description: 'when the sleep timer powers the zone off; null: no timer',
  }),
  tone: ZoneToneSchema,
  toneControls: ToneControlsSchema,
  amplifierStatus: AmplifierStatusSchema,
  ...availability(
    'the zone',
    'its amplifier unit is not fitted or does not answer, or its amplifier is not configured',
  ),
});

export const InputDeviceSchema = T.Object({
  id: T.String({ format: 'uuid' }),
  name: T.String(),
  kind: T.String(),
  input: Binding('amplifier source input'),
  isFavorite: T.Boolean(),
  ...availability('the input device', 'its amplifier is not configured'),
});

export type PlayerView = Static<typeof PlayerSchema>;
export type StreamOutput = Static<typeof StreamOutputSchema>;
export type ZoneView = Static<typeof ZoneSchema>;
export type ZoneToneView = Static<typeof ZoneToneSchema>;
export type ToneControlsView = Static<typeof ToneControlsSchema>;
export type AmplifierStatusView = Static<typeof AmplifierStatusSchema>;
export type InputDeviceView = Static<typeof InputDeviceSchema>;
