// @ts-check
// The Users tab (Admins only): accounts, roles, enabled state, assignments and API keys.

import { del, get, post, put } from './api.js';
import { confirmDialog, field, keyDialog, openDialog } from './dialogs.js';
import { attempt, count, h, reconcile, toast, uid } from './dom.js';
import { icon } from './icons.js';
import { changed, loadAudio, loadUsers, sorted, state } from './store.js';

const ROLES = ['Admin', 'Operator', 'Viewer'];
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function usersView(section) {
  const create = h(
    'button',
    { type: 'button', class: 'btn btn-primary', 'data-action': 'new-user', on: { click: createUser } },
    icon('plus'),
    h('span', { text: 'New user' }),
  );
  const head = h(
    'div',
    { class: 'view-head' },
    h(
      'div',
      {},
      h('h1', { class: 'view-title', id: 'h-users', text: 'Users' }),
      h('p', { class: 'view-sub', text: 'Who may sign in, what they may control, and their API keys.' }),
    ),
    h('div', { class: 'view-actions' }, create),
  );
  const list = h('ul', { class: 'card-grid user-grid', 'aria-label': 'Users' });
  section.append(head, h('p', { class: 'loading', text: 'Loading users…' }), list);
  return {
    render() {
      section.querySelector('.loading').hidden = state.loaded.users;
      if (!state.users) return;
      const users = [...state.users].sort((a, b) => a.username.localeCompare(b.username));
      reconcile(list, users, (u) => u.id, userCard);
    },
  };
}

/** Replaces one user in the model with what the API returned. */
function store(user) {
  if (!state.users) return;
  const i = state.users.findIndex((u) => u.id === user.id);
  if (i >= 0) state.users[i] = user;
  else state.users.push(user);
  changed('users');
}

/** A visible label plus words for screen readers ("Role" → "Role of bob", "Show" → "Show API key of bob"). */
const named = (visible, name, what = '') => [visible, h('span', { class: 'sr-only', text: ` ${what}of ${name}` })];

function userCard(_user) {
  const titleId = uid('user');
  const card = h('li', { class: 'card user-card', 'aria-labelledby': titleId });
  card.update = (u) => {
    const signature = JSON.stringify(u);
    if (card.signature === signature) return;
    const focused =
      document.activeElement && card.contains(document.activeElement)
        ? document.activeElement.getAttribute('data-action')
        : null;
    card.signature = signature;
    card.user = u;
    card.replaceChildren(...renderUser(u, titleId).filter(Boolean));
    card.classList.toggle('is-disabled', !u.isEnabled);
    if (focused) card.querySelector(`[data-action="${focused}"]`)?.focus();
  };
  return card;
}

function renderUser(u, titleId) {
  const self = u.id === state.me?.id;
  const roleId = uid('role');
  const enabledId = uid('enabled');
  const role = h(
    'select',
    {
      id: roleId,
      class: 'select',
      'data-action': 'role',
      disabled: self,
      on: { change: (e) => update(u, { role: e.target.value }, e.target) },
    },
    ROLES.map((r) => h('option', { value: r, selected: r === u.role, text: r })),
  );
  const enabled = h('input', {
    id: enabledId,
    type: 'checkbox',
    role: 'switch',
    class: 'switch',
    'data-action': 'enabled',
    checked: u.isEnabled,
    disabled: self,
    on: { change: (e) => update(u, { isEnabled: e.target.checked }, e.target) },
  });
  const button = (action, iconName, label, what, onClick, cls = 'btn btn-secondary btn-small') =>
    h(
      'button',
      { type: 'button', class: cls, 'data-action': action, on: { click: () => onClick(u) } },
      icon(iconName),
      h('span', {}, named(label, u.username, what)),
    );
  const keyText = u.apiKey
    ? h('code', { class: 'mono key-masked', text: u.apiKey })
    : h('span', { class: 'muted', text: 'No key (revoked)' });
  return [
    h(
      'div',
      { class: 'user-head' },
      h('span', { class: 'avatar', 'aria-hidden': 'true', text: u.username.slice(0, 1).toUpperCase() }),
      h(
        'div',
        { class: 'card-head-text' },
        h(
          'h2',
          { class: 'card-title', id: titleId },
          u.username,
          self ? h('span', { class: 'chip chip-you', text: 'You' }) : null,
        ),
        h('p', {
          class: 'card-meta',
          text: `Created ${dateFormat.format(new Date(u.createdAt))}${u.isEnabled ? '' : ' · disabled'}`,
        }),
      ),
      self
        ? null
        : h(
            'button',
            {
              type: 'button',
              class: 'btn btn-icon btn-quiet',
              'data-action': 'delete-user',
              'aria-label': `Delete ${u.username}`,
              title: `Delete ${u.username}`,
              on: { click: () => removeUser(u) },
            },
            icon('trash'),
          ),
    ),
    h(
      'div',
      { class: 'user-settings' },
      h('div', { class: 'field' }, h('label', { for: roleId }, named('Role', u.username)), role),
      h('div', { class: 'switch-field' }, enabled, h('label', { for: enabledId }, named('Enabled', u.username))),
    ),
    self ? h('p', { class: 'hint', text: 'You cannot change your own role or disable yourself here.' }) : null,
    h(
      'div',
      { class: 'user-row' },
      h('span', { class: 'label', text: 'API key' }),
      h(
        'div',
        { class: 'button-row' },
        keyText,
        u.apiKey ? button('show-key', 'eye', 'Show', 'API key ', showKey) : null,
        button('regenerate-key', 'refresh', u.apiKey ? 'Regenerate' : 'Create', 'API key ', regenerateKey),
        u.apiKey
          ? button('revoke-key', 'ban', 'Revoke', 'API key ', revokeKey, 'btn btn-ghost-danger btn-small')
          : null,
      ),
    ),
    h(
      'div',
      { class: 'user-row' },
      h('span', { class: 'label', text: 'Access' }),
      h('span', { class: 'access-summary', text: accessSummary(u) }),
      h(
        'div',
        { class: 'button-row' },
        button('assignments', 'shield', 'Edit access', '', editAssignments),
        // One's own password needs the current one too: that is the header's dialog.
        button(
          'password',
          'lock',
          'Set password',
          '',
          self ? () => document.getElementById('change-password').click() : setPassword,
        ),
      ),
    ),
  ];
}

/** A player's or zone's name as the Users tab shows it: marked when it cannot be used now. */
const labelOf = (thing) => (thing.available ? thing.name : `${thing.name} (unavailable)`);

function accessSummary(u) {
  if (u.role === 'Admin') return 'Everything (Admin)';
  const name = (map) => (id) => (map.has(id) ? labelOf(map.get(id)) : null);
  const players = u.assignments.playerIds.map(name(state.players)).filter(Boolean);
  const zones = u.assignments.zoneIds.map(name(state.zones)).filter(Boolean);
  if (!players.length && !zones.length) return 'No players or zones assigned';
  const part = (names, one) => (names.length ? `${count(names.length, one)} (${names.join(', ')})` : `no ${one}s`);
  return `${part(players, 'player')}; ${part(zones, 'zone')}`;
}

async function update(u, change, control) {
  try {
    store(await put(`/api/users/${u.id}`, change));
  } catch (err) {
    if (err.status !== 401) toast(err.message, 'error');
    if ('role' in change) control.value = u.role;
    else control.checked = u.isEnabled;
  }
}

async function showKey(u) {
  let apiKey;
  if (!(await attempt(async () => ({ apiKey } = await get(`/api/users/${u.id}/api-key`))))) return;
  await keyDialog({
    title: `API key of ${u.username}`,
    apiKey,
    note: 'Anyone with this key acts as this user. Keep it secret.',
  });
}

async function regenerateKey(u) {
  const result = await openDialog({
    title: u.apiKey ? `Regenerate the API key of ${u.username}?` : `Create an API key for ${u.username}?`,
    description: u.apiKey
      ? 'The old key stops working at once: every hub, script or dashboard using it gets “401 Unauthorized” until you give it the new key.'
      : 'A new key is created. Copy it into the integrations that should act as this user.',
    submitLabel: u.apiKey ? 'Regenerate key' : 'Create key',
    danger: Boolean(u.apiKey),
    onSubmit: () => post(`/api/users/${u.id}/api-key`),
  });
  if (!result) return;
  loadUsers().catch(() => {
    // A background reload: the page keeps what it shows, and the next change loads it again.
  });
  await keyDialog({
    title: `New API key of ${u.username}`,
    apiKey: result.apiKey,
    note: 'Copy it now and update every integration that used the old key.',
  });
}

async function revokeKey(u) {
  await confirmDialog({
    title: `Revoke the API key of ${u.username}?`,
    message:
      'The key stops working at once. The user can still sign in with a password, and you can create a new key later.',
    confirmLabel: 'Revoke key',
    danger: true,
    onConfirm: async () => {
      await del(`/api/users/${u.id}/api-key`);
      await loadUsers();
    },
  });
}

async function removeUser(u) {
  await confirmDialog({
    title: `Delete ${u.username}?`,
    message: 'The account, its API key and its sessions are removed for good.',
    confirmLabel: 'Delete user',
    danger: true,
    onConfirm: async () => {
      await del(`/api/users/${u.id}`);
      state.users = state.users.filter((x) => x.id !== u.id);
      changed('users');
    },
  });
}

function checkboxGroup(legend, items, checked, name) {
  return h(
    'fieldset',
    { class: 'check-group' },
    h('legend', { text: legend }),
    items.length
      ? items.map((item) => {
          const id = uid(name);
          return h(
            'div',
            { class: 'check' },
            h('input', { id, type: 'checkbox', name, value: item.id, checked: checked.includes(item.id) }),
            h('label', { for: id, text: item.label }),
          );
        })
      : h('p', { class: 'muted small', text: `No ${legend.toLowerCase()} exist yet.` }),
  );
}

/** Player and zone checkboxes side by side, `checked` ticked. */
function accessChoices(checked) {
  const players = sorted.players().map((p) => ({ id: p.id, label: labelOf(p) }));
  const zones = sorted.zones().map((z) => {
    const owner = z.playerId && state.players.get(z.playerId);
    return { id: z.id, label: owner ? `${labelOf(z)} · ${owner.name}` : labelOf(z) };
  });
  return h(
    'div',
    { class: 'check-columns' },
    checkboxGroup('Players', players, checked.playerIds, 'playerIds'),
    checkboxGroup('Zones', zones, checked.zoneIds, 'zoneIds'),
  );
}

const ticked = (form) => {
  const values = (name) => [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((el) => el.value);
  return { playerIds: values('playerIds'), zoneIds: values('zoneIds') };
};

async function editAssignments(u) {
  await openDialog({
    title: `Access of ${u.username}`,
    description:
      u.role === 'Admin'
        ? 'Admins control everything; this list applies if the role changes.'
        : 'The players and zones this user can see and control. Attaching a zone needs both the player and the zone.',
    content: [accessChoices(u.assignments)],
    submitLabel: 'Save access',
    wide: true,
    onSubmit: async (form) => {
      store(await put(`/api/users/${u.id}/assignments`, ticked(form)));
    },
  });
}

async function setPassword(u) {
  await openDialog({
    title: `Set the password of ${u.username}`,
    description: 'The user is signed out everywhere and signs in again with the new password. API keys keep working.',
    content: [
      field({
        name: 'password',
        label: 'New password',
        type: 'password',
        required: true,
        minlength: '8',
        maxlength: '256',
        autocomplete: 'new-password',
      }),
      field({
        name: 'confirm',
        label: 'Repeat the password',
        type: 'password',
        required: true,
        minlength: '8',
        maxlength: '256',
        autocomplete: 'new-password',
      }),
    ],
    submitLabel: 'Set password',
    onSubmit: async (form) => {
      const { password, confirm } = form.elements;
      if (password.value !== confirm.value) throw new Error('The two passwords differ.');
      await put(`/api/users/${u.id}/password`, { newPassword: password.value });
      toast(`Password of ${u.username} changed.`, 'success');
    },
  });
}

async function createUser() {
  // The checkboxes list what GET /api/players and /api/zones gave; load them if the Players view has not yet.
  if (!state.loaded.audio && !(await attempt(loadAudio))) return;
  const role = field({
    name: 'role',
    label: 'Role',
    value: 'Operator',
    options: ROLES.map((r) => ({ value: r, label: r })),
  });
  const access = h(
    'div',
    { class: 'new-user-access' },
    h('p', {
      class: 'hint',
      text: 'Operators and Viewers see and control only the players and zones ticked here (you can change this later).',
    }),
    accessChoices({ playerIds: [], zoneIds: [] }),
  );
  const select = role.querySelector('select');
  select.addEventListener('change', () => (access.hidden = select.value === 'Admin'));
  return openDialog({
    title: 'New user',
    description: 'The user gets an API key at once.',
    content: [
      field({
        name: 'username',
        label: 'Username',
        required: true,
        pattern: '[A-Za-z0-9._\\-]{3,64}',
        hint: '3 to 64 letters, digits, dots, dashes or underscores.',
        autocomplete: 'off',
        autocapitalize: 'none',
        spellcheck: 'false',
      }),
      field({
        name: 'password',
        label: 'Password',
        type: 'password',
        minlength: '8',
        maxlength: '256',
        autocomplete: 'new-password',
        hint: 'At least 8 characters. Leave it empty for an account that only uses its API key (a hub, the Home Assistant bridge).',
      }),
      role,
      access,
    ],
    submitLabel: 'Create user',
    wide: true,
    onSubmit: async (form) => {
      const { username, password } = form.elements;
      const body = { username: username.value.trim(), role: select.value };
      if (password.value) body.password = password.value;
      if (select.value !== 'Admin') body.assignments = ticked(form);
      return post('/api/users', body);
    },
  }).then((user) => {
    if (!user) return;
    store({ ...user, apiKey: `${user.apiKey.slice(0, 8)}…${user.apiKey.slice(-4)}` });
    loadUsers().catch(() => {
      // A background reload: the page keeps what it shows, and the next change loads it again.
    });
    return keyDialog({
      title: `API key of ${user.username}`,
      apiKey: user.apiKey,
      note: 'Copy it now for the integrations that should act as this user. You can show it again later.',
    });
  });
}
