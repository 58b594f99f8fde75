// The daemon's settings, one TypeBox schema per section, each setting with its range, default and one-line
// description; flags, AZC_* variables, config-file keys, --help and docs/configuration.md are derived from them.
import { Type } from '@sinclair/typebox';
import { nameProblem } from '../names.js';
import './setting-options.js';

const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** A host name as the Host check compares it: lower case, without the trailing dot of a fully qualified name. */
const hostName = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/** A duration setting in milliseconds. */
export const ms = (description: string, minimum: number, maximum: number, fallback: number) =>
  Type.Integer({ minimum, maximum, default: fallback, description: `${description}, in ms` });

const limit = (description: string, fallback: number) =>
  Type.Integer({ minimum: 1, maximum: 2 ** 31, default: fallback, description });

export const SERVER = Type.Object({
  host: Type.String({
    minLength: 1,
    default: '0.0.0.0',
    valueName: 'ADDRESS',
    description: 'address to listen on (0.0.0.0: every IPv4 interface, :: for IPv6 too)',
  }),
  port: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 8080,
    description: 'TCP port to listen on; 0 picks a free one',
  }),
  allowedHosts: Type.Array(Type.String({ minLength: 1 }), {
    default: [],
    flag: 'allowed-host',
    valueName: 'NAME',
    defaultText: "none: IP addresses, localhost, the machine's host name (also under .local) and the mDNS names only",
    description:
      "host names the API answers under besides IP addresses, localhost, the machine's host name and the mDNS names, such as a reverse proxy's (any other Host gets 421)",
    check: (names: string[]) => {
      const bad = names.find((name) => hostName(name).length > 253 || !HOST_NAME.test(hostName(name)));
      return bad === undefined
        ? undefined
        : `must list host names such as audio.example.lan (no scheme, port or path), got ${JSON.stringify(bad).slice(0, 80)}`;
    },
    normalize: (names: string[]) => names.map(hostName),
  }),
  maxBodyBytes: Type.Integer({
    minimum: 1024,
    maximum: 1024 * 1024,
    default: 64 * 1024,
    description: 'largest request body in bytes (413 above); POST /api/restore has limits.restoreBytes',
  }),
});

export const STATE = Type.Object({
  stateDir: Type.String({
    minLength: 1,
    default: 'data',
    relativePath: true,
    valueName: 'DIR',
    defaultText: './data',
    description: 'folder of the database (azc.db), the device key and initial-admin.txt; kept private (mode 0700)',
  }),
  exportDir: Type.Optional(
    Type.String({
      minLength: 1,
      relativePath: true,
      valueName: 'DIR',
      defaultText: '<stateDir>/exports',
      description: 'folder playlists are exported into',
    }),
  ),
});

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const LOGGING = Type.Object({
  logLevel: Type.Union(
    LOG_LEVELS.map((level) => Type.Literal(level)),
    { default: 'info', description: 'least severe log line written (one JSON object per line on stdout)' },
  ),
});

export const DISCOVERY = Type.Object({
  ssdp: Type.Boolean({
    default: false,
    description: 'announce the appliance on the LAN with SSDP and mDNS (the installed service turns it on)',
  }),
  ssdpInterfaces: Type.Array(Type.String({ minLength: 1 }), {
    default: [],
    valueName: 'LIST',
    defaultText: 'every IPv4 interface',
    description: 'network interfaces SSDP announces on, comma-separated',
  }),
  friendlyName: Type.String({
    minLength: 1,
    default: 'Audio Zone Controller',
    valueName: 'NAME',
    description: 'name announced over SSDP, mDNS and MQTT',
    check: (name: string) => nameProblem(name),
  }),
});

export const SECURITY = Type.Object({
  sessionIdleMs: ms('a dashboard session ends after this long unused', 60_000, 30 * 24 * 3600_000, 12 * 3600_000),
  sessionAbsoluteMs: ms(
    'a dashboard session ends this long after sign-in, used or not',
    60_000,
    365 * 24 * 3600_000,
    7 * 24 * 3600_000,
  ),
  loginFreeFailures: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 5,
    description: 'failed sign-ins per username and per address before back-off starts',
  }),
  loginBaseDelayMs: ms('first back-off after the free failures; it doubles per further failure', 100, 60_000, 1000),
  loginMaxDelayMs: ms('longest back-off between sign-in attempts', 1000, 24 * 3600_000, 15 * 60_000),
});

export const SSE = Type.Object({
  retryMs: ms('reconnect delay the event stream asks clients for (retry:)', 100, 60_000, 2000),
  pingIntervalMs: ms('how often an idle event stream sends a comment, so proxies keep it open', 1000, 300_000, 15_000),
  maxBufferedBytes: Type.Integer({
    minimum: 64 * 1024,
    maximum: 64 * 1024 * 1024,
    default: 1024 * 1024,
    description: 'bytes buffered for a client that stops reading before its stream is cut off',
  }),
  replayEvents: Type.Integer({
    minimum: 1024,
    maximum: 65_536,
    default: 4096,
    description: 'events kept for clients that resume with Last-Event-ID',
  }),
  recheckIntervalMs: ms(
    "how often open streams re-check their caller's credential (a revoked one is cut off within it)",
    50,
    1000,
    500,
  ),
});

/** Caps that keep one user, whatever its role, from starving the others. */
export const LIMITS = Type.Object({
  streamsPerUser: limit('open event streams per user (429 beyond it)', 16),
  streamsTotal: limit(
    'open event streams in all, across users (503 beyond it); keeps file descriptors for the API',
    512,
  ),
  playlists: limit('playlists on the appliance (409 beyond it)', 500),
  tracksPerPlaylist: limit('tracks in one playlist (409 beyond it)', 5000),
  exportFiles: limit(
    'files kept in the export folder (409 beyond it; replacing an existing file is always allowed)',
    500,
  ),
  exportBytes: limit('bytes kept in the export folder in all (409 beyond it)', 64 * 1024 * 1024),
  playlistPageDefault: limit('playlists per page of GET /api/playlists when the client names no limit', 50),
  playlistPageMax: limit('most playlists per page a client may ask for', 200),
  scenes: limit('saved scenes (409 beyond it; the undo slot does not count)', 100),
  restoreBytes: limit(
    'request body cap of POST /api/restore, which carries a whole backup (413 above)',
    32 * 1024 * 1024,
  ),
  announcementsQueued: limit('announcements waiting to play, from all users (429 beyond it)', 20),
  announcementsPerUser: limit('announcements one user may have waiting (429 beyond it)', 5),
});

/** A host name, an IPv4 address or a bracketed IPv6 one, with a port or not: an entry of playback.streamHosts. */
export const STREAM_HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::(?:[1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]))?$/i;

/** The stream players: what they play from, the program that plays them, and announcements. */
export const PLAYBACK = Type.Object({
  musicDir: Type.Optional(
    Type.String({
      minLength: 1,
      relativePath: true,
      valueName: 'DIR',
      defaultText: '<stateDir>/music (created if missing)',
      description:
        'folder the file: tracks of stream players are in; nothing outside it plays (symlinks that lead out included)',
    }),
  ),
  mpdPath: Type.String({
    minLength: 1,
    default: 'mpd',
    valueName: 'PROGRAM',
    description:
      'the MPD program that plays each stream player: a path, or a name looked up in PATH and the system program folders',
  }),
  defaultOutput: Type.Union([Type.Literal('alsa'), Type.Literal('fifo'), Type.Literal('null')], {
    default: 'alsa',
    description:
      'output kind of a stream player created with an output that names none (alsa: the ALSA device "default" unless one is named)',
  }),
  announcementMaxMs: ms(
    'longest an announcement plays before it is cut off and everything is put back',
    1000,
    30 * 60_000,
    60_000,
  ),
  streamHosts: Type.Array(Type.String({ minLength: 1 }), {
    default: [],
    valueName: 'LIST',
    defaultText: 'none: streams play from ports 80, 443 and 8000-8999 of other hosts',
    description:
      'hosts (any port) or host:port places stream players may also play http(s) streams from, comma-separated: a radio on another port, or on this appliance (localhost)',
    check: (entries: string[]) => {
      const bad = entries.find((entry) => !STREAM_HOST.test(entry));
      return bad === undefined
        ? undefined
        : `each entry must be a host name or address, with :port or not (radio.lan, 192.168.1.20:8443, [fd00::5]:9000), got ${JSON.stringify(bad).slice(0, 80)}`;
    },
  }),
});

export const FIRST_START = Type.Object({
  adminPassword: Type.Optional(
    Type.String({
      minLength: 1,
      writeOnly: true,
      flag: false,
      fileKey: false,
      env: 'AZC_ADMIN_PASSWORD',
      defaultText: 'random, printed once',
      description: 'password of the first administrator, created when the database is empty (read only then)',
      refused:
        'is taken only from AZC_ADMIN_PASSWORD: a flag shows in the process list and a config file gets copied around',
    }),
  ),
});
