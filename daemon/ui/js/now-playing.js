// @ts-check
// A stream player's now-playing panel: title, artist and album, progress, state and the transport buttons.

import { imageUrl, post } from './api.js';
import { attempt, attr, duration, h, iconButton, text } from './dom.js';
import { icon } from './icons.js';
import { can, castName, state } from './store.js';

const STATE_TEXT = { playing: 'Playing', paused: 'Paused', stopped: 'Stopped' };
/** What an arrow key and Page Up/Down move the track by. */
const SEEK_STEP_MS = 5000;
const SEEK_PAGE_MS = 30_000;
/** Why the player's MPD is not up, in words (the detail, when there is one, says more). */
const ENGINE_TEXT = {
  starting: 'Starting…',
  restarting: 'Restarting…',
  failed: 'Could not start',
  missing: 'MPD is not installed',
  stopped: 'Stopped',
};

/** What holds the output besides a cast: any other source is a receiver kind. */
const NOT_CAST = new Set(['mpd', 'announcement']);

/** The badge of a stream player's card: what it plays, not whether a zone is on. */
export const playbackState = (playerId) => state.playback.get(playerId)?.state ?? 'stopped';
export const stateText = (s) => STATE_TEXT[s];

/** `getPlayer` gives the player as the model holds it now. Viewers get the panel without buttons. */
export function nowPlaying(getPlayer) {
  const writable = can.change();
  const title = h('p', { class: 'np-title' });
  const byline = h('p', { class: 'np-by' });
  const engine = h('p', { class: 'unavailable-reason', hidden: true });
  // A cast's cover art, where its sender gave one (the playback's artwork: its path, with a version).
  const cover = h('img', { class: 'np-cover', alt: 'Cover art', hidden: true });
  const bar = h('progress', { class: 'np-bar', max: 1, value: 0, 'aria-hidden': writable ? 'true' : undefined });
  // For those who may move within the track the bar sits in a slider: focusable, its value in words, arrow keys seek.
  const seek = writable
    ? h('div', { class: 'np-seek', role: 'slider', tabindex: '0', 'aria-valuemin': '0' }, bar)
    : bar;
  const at = h('span', { class: 'track-dur np-time' });
  const length = h('span', { class: 'track-dur np-time' });
  const send = (command, body) => attempt(() => post(`/api/players/${getPlayer().id}/${command}`, body));
  // The play/pause button changes its data-action with the state, so each click sends what the button shows.
  const button = (name, label, action) =>
    iconButton({
      icon: icon(name),
      label,
      action,
      className: 'btn btn-icon btn-quiet',
      onClick: (event) => send(event.currentTarget.dataset.action),
    });
  const controls = writable
    ? [
        button('prev', 'Previous track', 'previous'),
        button('play', 'Play', 'resume'),
        button('stop', 'Stop', 'stop'),
        button('next', 'Next track', 'next'),
      ]
    : [];
  const [, toggle] = controls;
  const panel = h(
    'section',
    { class: 'now-playing' },
    h('div', { class: 'np-head' }, h('div', { class: 'np-text' }, title, byline), cover),
    engine,
    h('div', { class: 'np-progress' }, at, seek, length),
    writable ? h('div', { class: 'np-controls' }, controls) : null,
  );
  /** Moves to `positionMs` (kept within the track); the bar shows the target at once, so key presses add up. */
  const seekTo = (positionMs) => {
    const playback = state.playback.get(getPlayer().id);
    if (!playback?.durationMs || bar.classList.contains('is-disabled')) return;
    const target = Math.round(Math.max(0, Math.min(positionMs, playback.durationMs - 1)));
    bar.value = target;
    void send('seek', { positionMs: target });
  };
  if (writable) {
    // The bar is the seek control: a click lands at that fraction of the track.
    bar.addEventListener('click', (event) => {
      const box = bar.getBoundingClientRect();
      seekTo(((event.clientX - box.left) / box.width) * (state.playback.get(getPlayer().id)?.durationMs ?? 0));
    });
    // The keys of a slider: arrows step, Page Up/Down take bigger steps, Home goes back to the start.
    seek.addEventListener('keydown', (event) => {
      const step = {
        ArrowRight: SEEK_STEP_MS,
        ArrowUp: SEEK_STEP_MS,
        ArrowLeft: -SEEK_STEP_MS,
        ArrowDown: -SEEK_STEP_MS,
        PageUp: SEEK_PAGE_MS,
        PageDown: -SEEK_PAGE_MS,
      }[event.key];
      if (step === undefined && event.key !== 'Home') return;
      event.preventDefault();
      seekTo(event.key === 'Home' ? 0 : Number(bar.value) + step);
    });
  }
  /** Shows the cover at `path` (fetched once per version), or none; a cover that cannot be fetched stays hidden. */
  const showCover = (path) => {
    if ((cover.dataset.path ?? null) === path) return;
    if (path === null) delete cover.dataset.path;
    else cover.dataset.path = path;
    cover.hidden = true;
    cover.removeAttribute('src');
    if (path === null) return;
    imageUrl(path).then(
      (url) => {
        if (cover.dataset.path !== path) return;
        cover.src = url;
        cover.hidden = false;
      },
      () => {
        // No cover shown: the titles say what plays, and the next version of the playback tries again.
      },
    );
  };
  panel.update = (player) => {
    const p = state.playback.get(player.id);
    const playing = p?.state === 'playing';
    // A cast: the sender's titles, and which receiver it came through; this side can only end it (Pause).
    const cast = p && !NOT_CAST.has(p.source) ? castName(player.id, p.source) : undefined;
    const current = p && (p.title || p.name || p.uri || (cast && `${cast} cast`));
    text(title, current || 'Nothing playing');
    text(byline, current ? [p.artist, p.album && `(${p.album})`, cast && `· ${cast}`].filter(Boolean).join(' ') : '');
    showCover(p?.artwork ?? null);
    const down = p && p.engine.state !== 'up';
    engine.hidden = !down;
    text(engine, down ? [ENGINE_TEXT[p.engine.state], p.engine.detail].filter(Boolean).join(': ') : '');
    const total = p?.durationMs ?? 0;
    bar.max = total || 1;
    bar.value = total ? Math.min(p.positionMs, total) : 0;
    attr(seek, 'aria-label', `${player.name} track position`);
    attr(seek, 'aria-valuetext', total ? `${duration(p.positionMs)} of ${duration(total)}` : 'no length');
    if (writable) {
      attr(seek, 'aria-valuemax', String(Math.round(total / 1000)));
      attr(seek, 'aria-valuenow', String(Math.round(Math.min(p?.positionMs ?? 0, total) / 1000)));
    }
    text(at, p && current ? duration(p.positionMs) : '');
    text(length, total ? duration(total) : '');
    if (!writable) return;
    // Commands wait while an announcement plays on the player (the daemon answers 409), like any unavailable player.
    const usable = player.available && p?.engine.state !== 'missing' && !p?.announcementId;
    for (const control of controls) control.disabled = !usable || (!!cast && control !== toggle);
    bar.classList.toggle('is-disabled', !usable || !total);
    attr(seek, 'aria-disabled', usable && total ? null : 'true');
    attr(seek, 'title', usable && total ? 'Click, or use the arrow keys, to move within the track' : null);
    const label = `${playing ? 'Pause' : 'Play'} ${player.name}`;
    if (toggle.dataset.state !== String(playing)) {
      toggle.dataset.state = String(playing);
      toggle.dataset.action = playing ? 'pause' : 'resume';
      toggle.replaceChildren(icon(playing ? 'pause' : 'play'));
    }
    attr(toggle, 'aria-label', label);
    attr(toggle, 'title', label);
    for (const control of controls)
      if (control !== toggle) attr(control, 'aria-label', `${control.title} on ${player.name}`);
  };
  return panel;
}
