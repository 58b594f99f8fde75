// @ts-check
// The Home Assistant (MQTT) bridge card of the Settings tab (Admins): broker, broker login and the azcd account the
// bridge acts as, saved and applied at once; the bridge's state beside them.

import { get, put } from './api.js';
import { field } from './dialogs.js';
import { h, text, toast, uid } from './dom.js';
import { state } from './store.js';

/** How often, and how many times, the card asks again while the bridge is still connecting after a save. */
const POLL_MS = 700;
const POLLS = 12;

const STATE_WORDS = {
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Broker unreachable, retrying',
  misconfigured: 'Needs a fix',
  stopped: 'Stopped',
};
/** What each field is called at start, for a field those settings fix. */
const START_FLAGS = {
  url: '--mqtt-url',
  username: '--mqtt-username',
  password: 'AZC_MQTT_PASSWORD',
  account: '--mqtt-account',
};

export function bridgeCard() {
  const status = h('p', { class: 'bridge-status', role: 'status', dataset: { state: 'off' } });
  const topics = h('p', { class: 'hint' });
  const url = field({
    name: 'url',
    label: 'Broker URL',
    placeholder: 'mqtt://homeassistant.local:1883',
    autocomplete: 'off',
    spellcheck: 'false',
    maxlength: '256',
  });
  const username = field({
    name: 'username',
    label: 'Broker username',
    autocomplete: 'off',
    spellcheck: 'false',
    maxlength: '256',
    hint: 'The login the broker knows (Mosquitto’s user), not an azcd user.',
  });
  const password = field({
    name: 'password',
    label: 'Broker password',
    type: 'password',
    autocomplete: 'new-password',
    maxlength: '1024',
  });
  const forgetId = uid('forget');
  const forget = h(
    'div',
    { class: 'check', hidden: true },
    h('input', { id: forgetId, type: 'checkbox', name: 'forget' }),
    h('label', { for: forgetId, text: 'Remove the saved broker password' }),
  );
  const accountId = uid('account');
  const account = h('select', { id: accountId, name: 'account', 'aria-describedby': `${accountId}-hint` });
  const accountField = h(
    'div',
    { class: 'field' },
    h('label', { for: accountId, text: 'Bridge account' }),
    account,
    h('p', {
      class: 'hint',
      id: `${accountId}-hint`,
      text: 'The azcd user the bridge acts as: its role and assignments decide what Home Assistant sees and may change. Usually an Operator assigned the rooms to bridge.',
    }),
  );
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const save = h('button', {
    type: 'submit',
    class: 'btn btn-primary',
    'data-action': 'save-bridge',
    text: 'Save and connect',
  });
  const form = h(
    'form',
    { class: 'bridge-form', novalidate: true },
    url,
    username,
    password,
    forget,
    accountField,
    error,
    h('div', { class: 'button-row' }, save),
  );
  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'h-bridge' },
    h('h2', { class: 'card-title', id: 'h-bridge', text: 'Home Assistant (MQTT)' }),
    h('p', {
      class: 'card-text',
      text: 'The bridge publishes the zones, players, scenes and sleep timers of one azcd account to an MQTT broker; Home Assistant finds them by itself. Changes apply at once.',
    }),
    status,
    topics,
    form,
  );

  let current = null;
  let polls = 0;
  let pollTimer = 0;
  /** Edited since the last load or save: a refresh then updates the state shown, not what is being typed. */
  let dirty = false;
  const input = (name) => form.elements[name];
  form.addEventListener('input', () => (dirty = true));

  function show(settings, { fields = !dirty } = {}) {
    current = settings;
    const s = settings.status;
    status.dataset.state = s?.state ?? 'off';
    text(status, s ? `${STATE_WORDS[s.state] ?? s.state}${s.detail ? `: ${s.detail}` : ''}` : 'Off: no broker is set.');
    text(topics, `Topics under ${settings.baseTopic}/…, discovery under ${settings.discoveryPrefix}/…`);
    if (!fields) return;
    dirty = false;
    input('url').value = settings.url ?? '';
    input('username').value = settings.username ?? '';
    input('password').value = '';
    input('password').placeholder = settings.passwordSet ? 'Saved (leave empty to keep it)' : '';
    forget.hidden = !settings.passwordSet;
    input('forget').checked = false;
    for (const name of ['url', 'username', 'password', 'account']) lock(name, settings.locked.includes(name));
    fillAccounts();
  }

  function lock(name, locked) {
    const control = input(name);
    control.disabled = locked;
    control.title = locked ? `Set when the appliance started (${START_FLAGS[name]}); change it there.` : '';
    if (name === 'password') input('forget').disabled = locked;
  }

  /** The users an admin can name, the saved account kept even when it no longer exists (so the problem shows). */
  function fillAccounts() {
    const names = (state.users ?? []).map((u) => ({
      value: u.username,
      label: `${u.username} (${u.role}${u.isEnabled ? '' : ', disabled'})`,
    }));
    const saved = current?.account;
    if (saved && !names.some((n) => n.value.toLowerCase() === saved.toLowerCase()))
      names.push({ value: saved, label: `${saved} (no such user)` });
    const options = [{ value: '', label: 'None: the bridge does not start' }, ...names];
    const signature = JSON.stringify(options);
    if (account.dataset.signature !== signature) {
      account.dataset.signature = signature;
      account.replaceChildren(...options.map((o) => h('option', { value: o.value, text: o.label })));
    }
    const match = names.find((n) => saved && n.value.toLowerCase() === saved.toLowerCase());
    account.value = match ? match.value : '';
  }

  async function load() {
    try {
      show(await get('/api/settings/mqtt'));
    } catch (err) {
      if (err.status !== 401) text(status, err.message);
    }
  }

  /** After a save the bridge connects on its own time: ask again a few times while it is on its way. */
  function follow() {
    clearTimeout(pollTimer);
    if (polls-- <= 0 || !card.isConnected || current?.status?.state !== 'connecting') return;
    pollTimer = setTimeout(() => load().then(follow), POLL_MS);
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = {};
    for (const name of ['url', 'username', 'account']) {
      if (!input(name).disabled) body[name] = input(name).value.trim() || null;
    }
    if (!input('password').disabled) {
      if (input('password').value) body.password = input('password').value;
      else if (input('forget').checked) body.password = null;
    }
    error.hidden = true;
    save.disabled = true;
    try {
      show(await put('/api/settings/mqtt', body), { fields: true });
      toast('Bridge settings saved.', 'success');
      polls = POLLS;
      follow();
    } catch (err) {
      if (err.status === 401) return;
      error.textContent = err.message;
      error.hidden = false;
    } finally {
      save.disabled = false;
    }
  });

  /** The tab was opened or the users changed: the state may have moved meanwhile. */
  card.render = load;
  return card;
}
