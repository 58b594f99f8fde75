// The dashboard's own shapes for its type check (tsconfig.ui.json): its model and the options of its shared helpers.
// Declarations only, global like schemas.d.ts (which holds the API's resources and events): azcd does not serve them,
// so they cost the browser nothing.

/** Everything the event stream can send: the daemon's events, and the reset that asks for a full reload. */
type StreamEvent = DomainEvent | StreamReset;

/** A playlist as the page holds it: the list gives summaries, the open (or an edited) one has its tracks too. */
type PlaylistHeld = (PlaylistSummary & { tracks?: Track[] }) | Playlist;

/** One receiver of a stream player (AirPlay, UPnP/DLNA, Squeezelite), as GET /api/players/{id}/receivers lists it. */
type Receiver = Extract<DomainEvent, { type: 'player.receiverChanged' }>['payload']['receiver'];

/** The client-side model (store.js `state`): what the signed-in user may see, kept current by the event stream. */
interface DashboardState {
  me: User | null;
  players: Map<string, Player>;
  zones: Map<string, Zone>;
  playlists: Map<string, PlaylistHeld>;
  inputs: Map<string, InputDevice>;
  scenes: Map<string, Scene>;
  playback: Map<string, Playback>;
  /** The receivers of each stream player whose Casting dialog is open (GET …/receivers, then `player.receiverChanged`). */
  receivers: Map<string, Receiver[]>;
  /** Each receiver kind's name as people read it (`AirPlay`), as the receivers API gave it: kept once learnt. */
  castNames: Map<string, string>;
  announcements: Map<string, Announcement>;
  undoReady: boolean;
  users: User[] | null;
  /** Whether each amplifier link is up, by driver name (GET /api/health, then `hardware.status`). */
  hardware: Map<string, boolean>;
  locked: Set<string>;
  openPlaylistId: string | null;
  loaded: { audio: boolean; playlists: boolean; inputs: boolean; users: boolean; scenes: boolean };
}

/** dialogs.js openDialog(). */
interface DialogOptions {
  title: string;
  description?: string;
  content?: unknown[];
  submitLabel?: string;
  /** null: no cancel button */
  cancelLabel?: string | null;
  danger?: boolean;
  /** Runs on the primary button; what it throws is shown in the dialog, which stays open. */
  onSubmit?: (form: DialogForm) => unknown;
  onCancel?: () => void;
  wide?: boolean;
  blocking?: boolean;
}

/** A form whose fields are read by name (`form.elements.name.value`): field() names each input or select. */
type DialogForm = HTMLFormElement & { elements: { [name: string]: HTMLInputElement } };

/** dialogs.js field(): a labelled input, or a <select> with `options`; other keys become the input's attributes. */
interface FieldOptions {
  name: string;
  label: string;
  type?: string;
  value?: string;
  required?: boolean;
  options?: { value: string; label: string }[];
  hint?: string;
  [attribute: string]: unknown;
}

/** dom.js iconButton(). */
interface IconButtonOptions {
  icon: Element;
  /** the accessible name (and tooltip) when there is no visible label */
  label?: string;
  visibleLabel?: string;
  className?: string;
  action?: string;
  pressed?: boolean | 'true' | 'false';
  onClick?: (event: MouseEvent & { currentTarget: HTMLButtonElement }) => unknown;
  type?: 'button' | 'submit';
}

/** A message of dom.js toast(): it counts repeats and removes itself. */
interface Toast extends HTMLElement {
  message: string;
  dismiss(): void;
  repeat(): void;
}

interface HTMLDialogElement {
  /** Closes even a blocking dialog (set by openDialog; signing out closes every dialog with it). */
  forceClose?: () => void;
}
