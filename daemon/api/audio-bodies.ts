// What the player and zone routes share: the amplifier binding of a new player or zone, the volume body (absolute
// or relative), and how their 404 and 409 answers are documented.

import { VOLUME_REQUEST_FIELDS } from '../domain/audio/index.js';
import { ExactlyOneOf, T, Volume } from '../http/schema.js';
import { ProblemSchema } from './schemas.js';

export const Channel = T.Integer({ minimum: 1, maximum: 99, errorMessage: 'must be an integer channel number' });
export const DriverName = T.Optional(T.String({ errorMessage: 'must be a string' }));
export const AmplifierName = T.Optional(
  T.String({
    minLength: 1,
    maxLength: 64,
    errorMessage: 'must be the name of a configured amplifier',
    description: 'required when several amplifiers are configured',
  }),
);
export const notFoundDoc = { description: 'no such player/zone, or not in your assignments' };
/** The 409 of a write to a zone or player that cannot take it, documented with its problem-details body. */
export const unavailableDoc = (what: string) => ({
  description: `${what}: the problem names the amplifier and its unit that does not answer, or the amplifier that is not configured; nothing was changed`,
  schema: ProblemSchema,
  contentType: 'application/problem+json',
});
const Delta = T.Number({
  minimum: -1,
  maximum: 1,
  format: 'double',
  description: 'a change of the current volume on the daemon: 0.05 means 5 points louder',
  errorMessage: 'must be a number from -1 to 1',
});
export const VolumeBody = ExactlyOneOf(
  T.Object(
    { volume: T.Optional(Volume), delta: T.Optional(Delta) },
    {
      description:
        'exactly one of "volume" (absolute) and "delta" (relative to the current value); the result is clamped to each zone\'s maxVolume',
    },
  ),
  ['volume', 'delta'],
  VOLUME_REQUEST_FIELDS,
);
export const volumeBadRequest = { description: 'both or neither of "volume" and "delta", or a value out of range' };
