// @ts-check
// Turns RFC 9457 problem details into sentences a person reads: field labels instead of API field names.

/** The words the dashboard uses for each API field (the label of the control that feeds it, where there is one). */
const LABELS = {
  filePath: 'File name',
  volume: 'Volume',
  newOrder: 'Track order',
  trackIds: 'Tracks',
  tracks: 'Tracks',
  title: 'Title',
  uri: 'Location (URI)',
  durationMs: 'Length',
  name: 'Name',
  isFavorite: 'Favorite',
  muted: 'Mute',
  power: 'Power',
  zoneIds: 'Zones',
  playerIds: 'Players',
  username: 'Username',
  password: 'Password',
  newPassword: 'New password',
  currentPassword: 'Current password',
  role: 'Role',
  isEnabled: 'Enabled',
  'input.channel': 'Amplifier input',
  'input.driver': 'Amplifier driver',
  'output.channel': 'Amplifier output',
  'output.driver': 'Amplifier driver',
  kind: 'Kind',
  maxVolume: 'Volume limit',
  turnOnVolume: 'Turn-on volume',
  delta: 'Volume step',
  minutes: 'Sleep timer',
  passphrase: 'Passphrase',
  backup: 'Backup file',
  url: 'Broker URL',
  account: 'Bridge account',
  output: 'What plays into it',
  playlistId: 'Playlist',
  playerId: 'Player',
  zoneId: 'Zone',
  startIndex: 'Track',
  positionMs: 'Position',
  bass: 'Bass',
  treble: 'Treble',
  balance: 'Balance',
  loudness: 'Loudness',
  server: 'Music server',
};

/**
 * Messages that describe the API's JSON rather than what the person chose ({…} in them), per field (or the field it is
 * part of): the dashboard's sentence instead. A message saying "must be a UUID" names something this page holds an
 * id of: it is gone.
 */
const FIELD_SENTENCES = {
  'output.path': 'a FIFO needs its absolute path, for example /run/snapfifo',
  output:
    'a FIFO needs its absolute path, for example /run/snapfifo; a sound card takes the device as aplay -L names it, or nothing for the default one',
};
const API_SHAPE = /[{}|]|^is missing/;
const STALE_ID = 'that item is no longer on the appliance. Reload the page and choose again';

/** API addresses in a detail, said as the place in the dashboard that does the same. */
const PLACES = [
  [/\(POST \/api\/players with an "output"\)/g, '(New player, with this appliance playing into it)'],
  [/\(POST \/api\/backup\)/g, '(Settings, Backup)'],
  [/the file GET \/api\/backup downloads/g, 'the file Settings, Backup saves'],
];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Drops what a person cannot use from an API message: ids, API addresses, field names in API spelling. */
function plain(message) {
  // "no zone with id …": the page held something the appliance no longer has, or no longer lets this account use.
  const gone = /^no ([a-z ]+) with id [0-9a-f-]{36}$/i.exec(message);
  if (gone)
    return `that ${gone[1]} is no longer on the appliance or no longer yours to use. Reload the page and choose again`;
  let out = message;
  for (const [pattern, words] of PLACES) out = out.replace(pattern, words);
  out = out
    .replace(/\s*\(\s*(?:id\s+)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\s*\)/gi, '')
    .replace(/ with id [0-9a-f-]{36}/gi, '')
    .replace(UUID, 'it')
    .replace(/\s*\([^()]*\/api\/[^()]*\)/g, '')
    .replace(/`?\b(?:GET|POST|PUT|DELETE|PATCH) \/api\/[^\s`,;)]*`?/g, 'the dashboard')
    .replace(/`/g, '');
  // A field named in API spelling ("maxVolume") becomes its label; other quoted words (names) stay as they are.
  return out.replace(/"([A-Za-z][A-Za-z.]*)"/g, (quoted, name) => (LABELS[name] ? `"${LABELS[name]}"` : quoted));
}

/** "filePath" → "File path": the fallback for a field the table does not know. */
const humanise = (name) => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const capitalise = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** "filePath" → "File name"; "assignments.zoneIds" → "Zones"; "tracks.0.uri" → "Location (URI), item 1". */
export function fieldLabel(path, labels = {}) {
  if (labels[path]) return labels[path];
  if (LABELS[path]) return LABELS[path];
  const parts = path.split('.');
  const named = parts.filter((p) => !/^\d+$/.test(p));
  const index = parts.find((p) => /^\d+$/.test(p));
  const last = named.at(-1) ?? path;
  const label = LABELS[named.slice(-2).join('.')] ?? LABELS[last] ?? humanise(last);
  return index === undefined ? label : `${label}, item ${Number(index) + 1}`;
}

/** Drops the server's leading `"field"` (the label already names it) and says the rest in a sentence. */
function fieldMessage(path, message, labels) {
  const quoted = `"${path}"`;
  const rest = message.startsWith(quoted) ? message.slice(quoted.length).trimStart() : message;
  const label = fieldLabel(path, labels);
  if (!rest || rest === 'is required') return `${label} is required`;
  const top = path.split('.')[0];
  const sentence = FIELD_SENTENCES[path] ?? FIELD_SENTENCES[top];
  if (sentence && API_SHAPE.test(rest)) return `${fieldLabel(top, labels)}: ${sentence}`;
  if (/UUID/.test(rest)) return `${label}: ${STALE_ID}`;
  // "is not a file …" reads as a sentence after the label; "must …" keeps the label's colon.
  return /^is (not|no) /.test(rest) ? `${label} ${plain(rest)}` : `${label}: ${plain(rest)}`;
}

/** A leading `"knownField" must …` in a detail becomes `Label must …`; other quoted words (names) stay as they are. */
function humaniseDetail(detail) {
  const match = /^"([A-Za-z.]+)" (?=must|is required|needs)/.exec(detail);
  const text =
    match && (LABELS[match[1]] || match[1].includes('.'))
      ? `${fieldLabel(match[1])} ${detail.slice(match[0].length)}`
      : detail;
  return capitalise(plain(text));
}

/**
 * The words for a problem, or null when it carries none (the caller then says something by status). `labels` names
 * fields as the form that sent them calls them, over the table above.
 */
export function problemText(problem, labels = {}) {
  if (!problem || typeof problem !== 'object') return null;
  const errors = problem.errors && typeof problem.errors === 'object' ? Object.entries(problem.errors) : [];
  const lines = errors
    .filter(([field]) => field !== 'body' && field !== 'query' && field !== 'path')
    .map(([field, messages]) => fieldMessage(field, String([messages].flat()[0] ?? ''), labels));
  if (lines.length) return lines.join(' · ');
  if (typeof problem.detail === 'string' && problem.detail) return humaniseDetail(problem.detail);
  return null;
}
