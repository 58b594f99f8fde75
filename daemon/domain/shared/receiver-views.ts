// The JSON shape of one receiver of a stream player (AirPlay, UPnP/DLNA, Squeezelite), as a schema: the API and the
// events carry it. And the form of Squeezelite's music server, which the API and a restore both check.
import { type SchemaOptions, type Static, Type as T } from '@sinclair/typebox';
import { kindsInWords, RECEIVER_KIND_LIST, RECEIVER_KIND_NAMES } from '../../../drivers/index.js';
import { STREAM_HOST } from '../../config/sections.js';

/** A receiver kind's name: one of the drivers' registry (drivers/receivers/kinds.ts), in its order. */
export function ReceiverKindSchema(options: SchemaOptions = {}) {
  return T.Union(
    RECEIVER_KIND_NAMES.map((kind) => T.Literal(kind)),
    options,
  );
}

/** Each kind and what it runs, for a schema's description: `airplay (AirPlay: shairport-sync), …`. */
const KINDS_DESCRIBED = kindsInWords(RECEIVER_KIND_LIST.map((m) => `${m.kind} (${m.displayName}: ${m.program})`));

/** Every kind's name in words (`airplay, upnp or squeezelite`), and as people read them (`AirPlay, … and …`). */
export const KINDS_IN_WORDS = kindsInWords();
export const NAMES_IN_WORDS = kindsInWords(
  RECEIVER_KIND_LIST.map((m) => m.displayName),
  'and',
);

/** The kinds whose switch takes a music server, in words (`squeezelite`). */
export const SERVER_KINDS = kindsInWords(RECEIVER_KIND_LIST.filter((m) => m.takesServer).map((m) => m.kind));

export const ReceiverSchema = T.Object(
  {
    kind: ReceiverKindSchema({ description: KINDS_DESCRIBED }),
    name: T.String({ description: 'the receiver as people read it (AirPlay, UPnP/DLNA, Squeezelite)' }),
    enabled: T.Boolean({ description: 'switched on for this player by an admin' }),
    server: T.Union([T.String(), T.Null()], {
      description: `${SERVER_KINDS} only: its music server (host or host:port); null: found on the LAN, or another kind`,
    }),
    available: T.Boolean({
      description: 'whether its program is installed here (detail says what to install when not)',
    }),
    package: T.String({ description: 'the Debian package that installs its program' }),
    phase: T.Union([T.Literal('stopped'), T.Literal('running'), T.Literal('restarting')], {
      description:
        'stopped (switched off, or not started), running (its process is up), restarting (it went away, back soon)',
    }),
    cast: T.Union([T.Literal('idle'), T.Literal('playing'), T.Literal('paused')], {
      description: 'what a sender does through it',
    }),
    detail: T.Union([T.String(), T.Null()], {
      description:
        'why it cannot run (its program missing) or is not running, or what it last reported going wrong; null when all is well',
    }),
    variant: T.Optional(
      T.String({
        description:
          'airplay only, while its program runs: the protocol it runs as, "AirPlay 1" or "AirPlay 2" (an AirPlay 2 build of shairport-sync with nqptp running)',
      }),
    ),
  },
  { title: 'Receiver' },
);

export type ReceiverView = Static<typeof ReceiverSchema>;

/** The longest music server taken: a host name (253 characters) with a port. */
const SERVER_MAX = 259;
const SERVER_FORM =
  'must be the music server as host or host:port (a host name, an IPv4 address or an [IPv6] one; a port from 1 to 65535), such as lms.lan or 192.168.1.20:9000';

/** What is wrong with a music server's address (`host` or `host:port`), or undefined when nothing is. */
export function serverProblem(server: string): string | undefined {
  if (server.length > SERVER_MAX || !STREAM_HOST.test(server)) return SERVER_FORM;
  const bracketed = server.startsWith('[');
  const host = bracketed ? server.slice(1, server.indexOf(']')) : server.split(':')[0]!;
  // The host name rule lets digits through as labels: a dotted number must be an IPv4 address. (node's net module is
  // loaded here, with the first server given, not at start: ARCHITECTURE.md, "Memory".)
  const { isIPv4, isIPv6 } = process.getBuiltinModule('node:net');
  if (bracketed ? !isIPv6(host) : /^[\d.]+$/.test(host) && !isIPv4(host)) return SERVER_FORM;
  return undefined;
}
