// The options every serial family takes, as a settings schema: the port, and the line's timings with their ranges.
// Each family passes its own defaults (kept, with their reasons, in its options.ts).
import { Type } from '@sinclair/typebox';
import { parseTcpPort } from '../port.js';
import type { SerialTimings } from './serial-options.js';

/** Why `path` cannot be a serial port: a malformed tcp:// address would otherwise only show as endless reconnects. */
export function serialPortProblem(path: string): string | undefined {
  try {
    parseTcpPort(path);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const ms = (text: string, minimum: number, maximum: number, fallback: number) =>
  Type.Optional(Type.Integer({ minimum, maximum, default: fallback, description: `${text}, in ms` }));

export function serialOptionsSchema(defaults: SerialTimings) {
  return Type.Object({
    serialPort: Type.String({
      minLength: 1,
      description:
        "the amplifier's serial device (best a /dev/serial/by-id/... path) or tcp://host:port for an IP-serial adapter",
      check: serialPortProblem,
      alsoCalled: ['port'],
    }),
    baudRate: Type.Optional(
      Type.Integer({
        minimum: 1200,
        maximum: 115_200,
        default: defaults.baudRate,
        description: "serial line speed; over tcp:// the adapter's own setting applies",
      }),
    ),
    pollIntervalMs: ms('how often every zone is read', 200, 600_000, defaults.pollIntervalMs),
    commandTimeoutMs: ms(
      'how long a reply may take before the command counts as unanswered',
      50,
      60_000,
      defaults.commandTimeoutMs,
    ),
    interCommandGapMs: ms(
      'quiet time between commands (amplifiers lose sync when commands are pipelined)',
      0,
      5000,
      defaults.interCommandGapMs,
    ),
    reconnectMinMs: ms(
      'first delay before reconnecting a lost link; it doubles per failed attempt',
      50,
      600_000,
      defaults.reconnectMinMs,
    ),
    reconnectMaxMs: ms('longest delay between reconnect attempts', 50, 3_600_000, defaults.reconnectMaxMs),
    offlineAfterTimeouts: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: defaults.offlineAfterTimeouts,
        description: 'unanswered commands in a row after which the amplifier counts as offline',
      }),
    ),
  });
}
