// @ts-check
// The dashboard's entry point: sign-in, the header and tabs, the live event stream and view switching.
import { api, applianceName, get, session, setUnauthorizedHandler } from './js/api.js';
import { settingsView } from './js/backup.js';
import { toast } from './js/dom.js';
import { hydrateIcons } from './js/icons.js';
import { inputsView } from './js/inputs.js';
import { changePasswordDialog } from './js/password.js';
import { playersView } from './js/players.js';
import { playlistsView } from './js/playlists.js';
import { applyEvent, can, loadAll, loadMe, reset, state, subscribe } from './js/store.js';
import { followEvents } from './js/stream.js';
import { usersView } from './js/users.js';

const $ = (id) => document.getElementById(id);
const TABS = ['players', 'playlists', 'inputs', 'users', 'settings'];
const FACTORIES = {
  players: playersView,
  playlists: playlistsView,
  inputs: inputsView,
  users: usersView,
  settings: settingsView,
};
const TOPICS = {
  players: ['audio', 'inputs', 'scenes', 'playback', 'announcements'],
  playlists: ['playlists', 'audio'],
  inputs: ['inputs'],
  users: ['users', 'audio'],
  settings: ['users'],
};
/** Tabs only Admins get. */
const ADMIN_TABS = new Set(['users', 'settings']);

let views = {};
let stream = null;
let renderedRole = null;
/** True while the password change signs in again: the old token's 401s are expected then. */
let renewing = false;
/** Events that arrive while the first state load is running are applied after it. */
let backlog = null;

// ---- sign-in ------------------------------------------------------------------------------------

/** `kind` 'info' shows the message as news (a finished restore) rather than as an error. */
function showSignIn(message, kind = 'error') {
  $('app').hidden = true;
  $('signin').hidden = false;
  const error = $('signin-error');
  error.hidden = !message;
  error.textContent = message ?? '';
  error.dataset.kind = kind;
  $('signin-username').focus();
}

$('signin-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = /** @type {DialogForm} */ (event.currentTarget);
  const username = form.elements.username.value.trim();
  const password = form.elements.password.value;
  const error = $('signin-error');
  if (!username || !password) {
    error.textContent = 'Enter your username and password.';
    error.dataset.kind = 'error';
    error.hidden = false;
    return;
  }
  const button = form.querySelector('button');
  button.disabled = true;
  error.hidden = true;
  try {
    const result = await api('POST', '/api/auth/login', { username, password }, { auth: false });
    session.save(result.token, result.expiresAt);
    form.reset();
    state.me = result.user;
    start();
  } catch (err) {
    error.textContent = err.status === 401 ? 'Wrong username or password, or the account is disabled.' : err.message;
    error.dataset.kind = 'error';
    error.hidden = false;
    form.elements.password.select();
  } finally {
    button.disabled = false;
  }
});

function endSession(message, kind) {
  stream?.stop();
  stream = null;
  session.clear();
  reset();
  for (const id of TABS) $(`view-${id}`).replaceChildren();
  views = {};
  renderedRole = null;
  for (const d of document.querySelectorAll('dialog')) if (d.open) d.forceClose ? d.forceClose() : d.close();
  showSignIn(message, kind);
}

setUnauthorizedHandler(() => {
  if (session.token && !renewing) endSession('Your session has ended. Please sign in again.');
});

async function signOut() {
  stream?.stop();
  try {
    await api('POST', '/api/auth/logout');
  } catch {
    // Signing out locally is what matters; the token is forgotten either way.
  }
  endSession();
}

$('signout').addEventListener('click', signOut);

/** Runs `work` (which replaces the session token) with the event stream paused, then follows events again. */
async function renew(work) {
  renewing = true;
  stream?.stop();
  try {
    return await work();
  } finally {
    renewing = false;
    if (state.me && session.token) openStream();
  }
}

$('change-password').addEventListener('click', () => changePasswordDialog({ renew, signOut }));

let passwordPrompt = null;

/** The first administrator's generated password must be replaced before anything else. */
function requirePasswordChange() {
  if (state.me?.passwordChangeRequired !== true || passwordPrompt) return;
  passwordPrompt = changePasswordDialog({ required: true, renew, signOut }).finally(() => (passwordPrompt = null));
}

// ---- the signed-in app --------------------------------------------------------------------------

function start() {
  $('signin').hidden = true;
  $('app').hidden = false;
  buildViews();
  route();
  openStream();
  // If the stream cannot connect (a proxy that buffers, say), still show the state.
  setTimeout(() => {
    if (state.me && !state.loaded.audio && !loadingNow) void refetch();
  }, 3000);
  get('/api/health').then(showHealth, () => {
    // The health line is a courtesy: the views load and report on their own.
  });
  requirePasswordChange();
}

function openStream() {
  backlog = [];
  stream = followEvents({
    token: () => session.token,
    onState: showConnection,
    onUnauthorized: () => endSession('Your session has ended. Please sign in again.'),
    onOpen: (resumed) => {
      if (!resumed) void refetch();
    },
    onEvent: (event) => {
      if (backlog) backlog.push(event);
      else if (!applyEvent(event)) void refetch();
    },
  });
}

let loadingNow = false;

/** Loads everything; events received meanwhile are replayed on top (they carry absolute values). */
function refetch() {
  backlog ??= [];
  loadingNow = true;
  return loadAll()
    .then(() => {
      const events = backlog ?? [];
      backlog = null;
      for (const event of events) applyEvent(event);
    })
    .finally(() => (loadingNow = false))
    .catch((err) => {
      backlog = null;
      if (err.status !== 401) toast(err.message, 'error');
    });
}

function buildViews() {
  if (renderedRole === state.me.role) return;
  renderedRole = state.me.role;
  for (const id of TABS) {
    const section = $(`view-${id}`);
    section.replaceChildren();
    views[id] = ADMIN_TABS.has(id) && !can.admin() ? null : FACTORIES[id](section, { renew, endSession });
  }
  $('account-name').textContent = state.me.username;
  $('account-role').textContent = state.me.role;
  $('account-role').dataset.role = state.me.role;
  for (const id of ADMIN_TABS) document.querySelector(`[data-tab="${id}"]`).toggleAttribute('hidden', !can.admin());
  for (const view of Object.values(views)) view?.render();
}

function currentTab() {
  const wanted = location.hash.replace(/^#\/?/, '') || 'players';
  if (!TABS.includes(wanted) || (ADMIN_TABS.has(wanted) && !can.admin())) return 'players';
  return wanted;
}

function route() {
  if (!state.me) return;
  const tab = currentTab();
  for (const id of TABS) {
    $(`view-${id}`).hidden = id !== tab;
    const link = document.querySelector(`[data-tab="${id}"]`);
    if (id === tab) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  views[tab]?.render();
  document.title = `${tab[0].toUpperCase()}${tab.slice(1)} · ${applianceTitle}`;
}

window.addEventListener('hashchange', () => {
  route();
  $('main').focus({ preventScroll: true });
});

subscribe((topics) => {
  if (!state.me) return;
  if (topics.has('me')) {
    requirePasswordChange();
    if (renderedRole !== state.me.role) {
      buildViews();
      if (can.admin()) void refetch();
    }
    route();
  }
  if (topics.has('hardware')) showHardware();
  const tab = currentTab();
  if (TOPICS[tab].some((topic) => topics.has(topic))) views[tab]?.render();
});

// Coming back to a tab that slept: pick up assignment changes that no event announced.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.me && !backlog) void refetch();
});

// ---- header bits ---------------------------------------------------------------------------------

const CONNECTION_TEXT = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' };

function showConnection(kind) {
  const el = $('conn');
  el.dataset.state = kind;
  el.textContent = CONNECTION_TEXT[kind];
}

function showHealth(health) {
  $('footer-version').textContent = `azcd ${health.version}`;
  for (const driver of health.drivers) state.hardware.set(driver.name, driver.online);
  showHardware();
}

function showHardware() {
  const offline = [...state.hardware].filter(([, online]) => !online).map(([name]) => name);
  const banner = $('hardware-banner');
  banner.hidden = offline.length === 0;
  banner.textContent = offline.length
    ? `The amplifier (${offline.join(', ')}) is not responding. Changes are kept and applied when it is back.`
    : '';
}

let applianceTitle = 'Audio Zone Controller';

async function boot() {
  hydrateIcons();
  void applianceName().then((name) => {
    if (!name) return;
    applianceTitle = name;
    for (const el of document.querySelectorAll('[data-appliance-name]')) el.textContent = name;
    document.title = name;
    if (state.me) route();
  });
  if (!session.token) return showSignIn();
  try {
    await loadMe();
    start();
  } catch (err) {
    if (err.status !== 401) showSignIn(err.message);
  }
}

void boot();
