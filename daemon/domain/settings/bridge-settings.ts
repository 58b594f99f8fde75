// The MQTT bridge settings an admin edits in the dashboard: checked, stored (the broker password sealed with the
// device key), and merged with those given at start, which win field by field.
import { type MqttConfig, mqttUrlProblem, settingNames } from '../../config.js';
import { usernameProblem } from '../../names.js';
import { type BridgeRepo, brokerOf, type SavedBridgeSettings } from '../../store/bridge-repo.js';
import type { Store } from '../../store/db.js';
import type { DeviceSecrets } from '../accounts/index.js';
import type { AccountState, Caller, FieldErrors } from '../shared/index.js';
import { conflict, invalid, requireAdmin } from '../shared/index.js';

export const BRIDGE_FIELDS = ['url', 'username', 'password', 'account'] as const;
export type BridgeField = (typeof BRIDGE_FIELDS)[number];
/** The 400 of a change that names no field (the route's schema says it too, as anyOf). */
export const BRIDGE_CHANGE_NONE = `send at least one of ${BRIDGE_FIELDS.map((f) => `"${f}"`).join(', ')}`;

/**
 * misconfigured: the settings cannot work (no bridge account, an account that does not exist or is disabled, a
 * broker password without a username, an unreadable TLS file); `detail` says which and how to fix it. connecting:
 * first attempt; connected; reconnecting: the broker went away and the bridge is retrying with back-off; stopped:
 * the daemon is shutting down or the settings are being replaced.
 */
export const BRIDGE_STATES = ['misconfigured', 'connecting', 'connected', 'reconnecting', 'stopped'] as const;
export type BridgeState = (typeof BRIDGE_STATES)[number];

export interface BridgeStatus {
  state: BridgeState;
  /** Why the bridge is not connected or misconfigured, when it knows (never a secret). */
  detail?: string;
}

/** What runs the bridge (mqtt/supervisor.ts): told when the settings changed, asked how it is doing. */
export interface BridgeControl {
  /** Replaces the running bridge with one on the settings that apply now; resolves once it is connecting. */
  apply(): Promise<void>;
  /** Undefined while no broker URL is set. */
  readonly status: BridgeStatus | undefined;
  /** The topic roots of the settings that apply now. */
  topics(): { baseTopic: string; discoveryPrefix: string };
}

/** The settings as the API shows them: what applies now; the password never leaves in any form but "set". */
export interface BridgeSettingsView {
  url: string | null;
  username: string | null;
  passwordSet: boolean;
  account: string | null;
  /** Fields given at start (flags, environment, config file): they win, and cannot be changed here. */
  locked: BridgeField[];
  baseTopic: string;
  discoveryPrefix: string;
  status: BridgeStatus | null;
}

/** A change: a field left out stays; null (or '' for the texts) removes the saved value. */
export interface BridgeSettingsChange {
  url?: string | null;
  username?: string | null;
  password?: string | null;
  account?: string | null;
}

const MAX_USERNAME = 256;
const MAX_PASSWORD = 1024;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The start-up setting that locks each field, as the 409 names it. */
const SET_AT_START: Record<BridgeField, string> = {
  url: settingNames('mqtt.url'),
  username: settingNames('mqtt.username'),
  password: `${settingNames('mqtt.password')} or ${settingNames('mqtt.passwordFile')}`,
  account: settingNames('mqtt.account'),
};

export class BridgeSettings<Control extends BridgeControl = BridgeControl> {
  /** The bridge these settings run: made by the factory given, which is handed these settings (it asks effective()). */
  readonly control: Control;

  constructor(
    private readonly store: Store,
    private readonly repo: BridgeRepo,
    private readonly secrets: DeviceSecrets,
    /** The MQTT settings from defaults, config file, environment and flags. */
    private readonly startup: MqttConfig,
    private readonly accountState: (username: string) => AccountState,
    control: (settings: BridgeSettings<Control>) => Control,
    private readonly log: (fields: Record<string, unknown>, message: string) => void = () => {
      // No logger given (tests): nothing to say.
    },
  ) {
    this.control = control(this);
  }

  /**
   * Fields set at start. The broker login is one: a username from the command line with a password from the
   * dashboard (or the other way round) would pair credentials nobody chose together.
   */
  locked(): BridgeField[] {
    const { url, username, password, account } = this.startup;
    const login = username !== undefined || password !== undefined;
    return BRIDGE_FIELDS.filter((field) =>
      field === 'url' ? url !== '' : field === 'account' ? account !== undefined : login,
    );
  }

  /** The settings the bridge runs with: the start-up ones, with the dashboard's for every field not set at start. */
  effective(): MqttConfig {
    const saved = this.repo.settings();
    const locked = new Set(this.locked());
    const config = { ...this.startup };
    if (!locked.has('url') && saved.url !== undefined) config.url = saved.url;
    if (!locked.has('account') && saved.account !== undefined) config.account = saved.account;
    if (!locked.has('username')) {
      config.username = saved.username;
      config.password = saved.password ? this.open(saved.password) : undefined;
    }
    return config;
  }

  view(caller: Caller): BridgeSettingsView {
    requireAdmin(caller, 'reading the Home Assistant bridge settings');
    return this.current();
  }

  private current(): BridgeSettingsView {
    const config = this.effective();
    return {
      url: config.url || null,
      username: config.username ?? null,
      passwordSet: config.password !== undefined,
      account: config.account ?? null,
      locked: this.locked(),
      ...this.control.topics(),
      status: this.control.status ?? null,
    };
  }

  /**
   * Checks and stores a change (nothing is stored when any field is refused), then has the bridge start again on
   * the settings that apply now; answers with them once it is connecting.
   */
  async update(caller: Caller, change: BridgeSettingsChange): Promise<BridgeSettingsView> {
    requireAdmin(caller, 'changing the Home Assistant bridge settings');
    const given = BRIDGE_FIELDS.filter((field) => change[field] !== undefined);
    if (given.length === 0) throw invalid(BRIDGE_CHANGE_NONE, { body: [BRIDGE_CHANGE_NONE] });
    this.refuseLocked(change, given);
    this.refuseUnpinnedPassword(change);
    const errors: FieldErrors = {};
    const text = (value: string | null | undefined) => (value === null || value === '' ? undefined : value);
    const url = text(change.url);
    const urlProblem = url === undefined ? undefined : mqttUrlProblem(url);
    if (urlProblem) errors.url = [urlProblem];
    const username = text(change.username);
    if (username !== undefined && (username.length > MAX_USERNAME || CONTROL.test(username))) {
      errors.username = [`must be 1 to ${MAX_USERNAME} characters without control characters`];
    }
    if (change.password === '' || (typeof change.password === 'string' && [...change.password].length > MAX_PASSWORD)) {
      errors.password = [`must be 1 to ${MAX_PASSWORD} characters (null removes the saved password)`];
    }
    const account = text(change.account);
    const accountProblem = account === undefined ? undefined : usernameProblem(account);
    if (accountProblem) errors.account = [`${accountProblem}: name an existing azcd user`];
    else if (account !== undefined && this.accountState(account) === 'missing') {
      errors.account = [
        `no azcd user is named ${JSON.stringify(account.slice(0, 64))}: create it first (Users), then name it here`,
      ];
    }
    const next: SavedBridgeSettings = { ...this.repo.settings() };
    if (change.url !== undefined) next.url = url;
    if (change.username !== undefined) next.username = username;
    if (change.account !== undefined) next.account = account;
    if (change.password !== undefined && !errors.password)
      next.password = change.password === null ? undefined : this.seal(change.password);
    // The saved password belongs to the broker it was saved for: moving to another one (scheme, host or port) without
    // giving it again drops it, so it is never sent to a host nobody gave it for. A password saved while no broker
    // was set goes to the first one set.
    const before = this.effective().url;
    if (
      change.url !== undefined &&
      change.password === undefined &&
      before !== '' &&
      brokerOf(before) !== brokerOf(url ?? '')
    )
      next.password = undefined;
    // MQTT sends a password only with a username: a broker would refuse the login without saying why.
    if (next.password && !next.username && !errors.username) {
      (errors[change.username !== undefined ? 'username' : 'password'] ??= []).push(
        'a broker password needs a broker username',
      );
    }
    if (Object.keys(errors).length > 0) {
      const detail = Object.entries(errors)
        .map(([field, messages]) => `"${field}" ${messages.join('; ')}`)
        .join('; ');
      throw invalid(detail, errors);
    }
    this.store.transaction(() => this.repo.setSettings(next));
    this.log(
      { by: caller.username, fields: given, url: next.url ?? null, account: next.account ?? null },
      'MQTT bridge settings changed',
    );
    await this.control.apply();
    return this.current();
  }

  /** A field set at start cannot be changed here; sending the value it already has is no change. */
  private refuseLocked(change: BridgeSettingsChange, given: BridgeField[]): void {
    const locked = new Set(this.locked());
    const current = this.startup;
    const same = (field: BridgeField) =>
      field === 'url'
        ? (change.url ?? '') === current.url
        : field === 'password'
          ? false
          : (change[field] ?? undefined) === current[field];
    const refused = given.filter((field) => locked.has(field) && !same(field));
    if (refused.length === 0) return;
    throw conflict(
      `${refused.map((f) => `"${f}"`).join(', ')} ${refused.length === 1 ? 'is' : 'are'} set at start by ` +
        `${refused.map((f) => SET_AT_START[f]).join(' and ')}, which win over the dashboard: change or remove ${refused.length === 1 ? 'it' : 'them'} there and restart`,
    );
  }

  /**
   * A broker password given at start without the URL would go to whichever broker the dashboard names next: the
   * person who put it in the service's environment never chose that host. Moving the bridge to another broker is
   * then refused; the URL is pinned at start along with it.
   */
  private refuseUnpinnedPassword(change: BridgeSettingsChange): void {
    if (change.url === undefined || this.startup.password === undefined || this.startup.url !== '') return;
    if (brokerOf(change.url ?? '') === brokerOf(this.effective().url) || !change.url) return;
    throw conflict(
      `"url" cannot name another broker while the broker password is set at start by ${SET_AT_START.password}: it would be sent to that broker; ` +
        `give the broker URL at start too (${SET_AT_START.url}), or remove the password there and give it here with the URL`,
    );
  }

  private seal(password: string): SavedBridgeSettings['password'] {
    const { nonce, box } = this.secrets.seal(password);
    return { nonce: nonce.toString('base64'), box: box.toString('base64') };
  }

  /** The saved password in clear, for the bridge only; undefined when its box does not open (another device key). */
  private open(sealed: NonNullable<SavedBridgeSettings['password']>): string | undefined {
    return (
      this.secrets.open({ nonce: Buffer.from(sealed.nonce, 'base64'), box: Buffer.from(sealed.box, 'base64') }) ??
      undefined
    );
  }
}
