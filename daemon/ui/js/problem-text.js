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
};

/** "filePath" → "File path": the fallback for a field the table does not know. */
const humanise = (name) => {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const capitalise = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** "filePath" → "File name"; "assignments.zoneIds" → "Zones"; "tracks.0.uri" → "Location (URI), item 1". */
export function fieldLabel(path) {
  if (LABELS[path]) return LABELS[path];
  const parts = path.split('.');
  const named = parts.filter((p) => !/^\d+$/.test(p));
  const index = parts.find((p) => /^\d+$/.test(p));
  const last = named.at(-1) ?? path;
  const label = LABELS[named.slice(-2).join('.')] ?? LABELS[last] ?? humanise(last);
  return index === undefined ? label : `${label}, item ${Number(index) + 1}`;
}

/** Drops the server's leading `"field"` (the label already names it) and says the rest in a sentence. */
function fieldMessage(path, message) {
  const quoted = `"${path}"`;
  const rest = message.startsWith(quoted) ? message.slice(quoted.length).trimStart() : message;
  if (!rest || rest === 'is required') return `${fieldLabel(path)} is required`;
  return `${fieldLabel(path)}: ${rest}`;
}

/** A leading `"knownField" must …` in a detail becomes `Label must …`; other quoted words (names) stay as they are. */
function humaniseDetail(detail) {
  const match = /^"([A-Za-z.]+)" (?=must|is required|needs)/.exec(detail);
  const text = match && (LABELS[match[1]] || match[1].includes('.')) ? `${fieldLabel(match[1])} ${detail.slice(match[0].length)}` : detail;
  return capitalise(text);
}

/** The words for a problem, or null when it carries none (the caller then says something by status). */
export function problemText(problem) {
  if (!problem || typeof problem !== 'object') return null;
  const errors = problem.errors && typeof problem.errors === 'object' ? Object.entries(problem.errors) : [];
  const lines = errors
    .filter(([field]) => field !== 'body' && field !== 'query' && field !== 'path')
    .map(([field, messages]) => fieldMessage(field, String([messages].flat()[0] ?? '')));
  if (lines.length) return lines.join(' · ');
  if (typeof problem.detail === 'string' && problem.detail) return humaniseDetail(problem.detail);
  return null;
}
