// Commands from the hub: parsed and sent through the same domain services and policy as REST, which check the
// bridge account as they run.

import type { PlayersService, ZonesService } from '../domain/audio/index.js';
import type { ReceiverKindName, ReceiverSwitches, Transport } from '../domain/playback/index.js';
import { MAX_SLEEP_MINUTES, type ScenesService, type SleepTimers } from '../domain/scenes/index.js';
import { type Caller, DomainError } from '../domain/shared/index.js';
import type { Logger } from '../log.js';
import { MAX_COMMAND_BYTES, WARN_BUDGET, WARN_WINDOW_MS } from './options.js';
import {
  LEGACY_NO_SOURCE,
  NO_SOURCE,
  ON,
  PRESS,
  parseMinutes,
  parseOnOff,
  parsePercent,
  parseToneStep,
  sourceLabels,
} from './payloads.js';
import type { CommandTarget, PlayerCommand, Topics } from './topics.js';
import { bridgedPlayers, type SteppedTone, toneStepsOf } from './view.js';

/** The slice of the audio capability the bridge reads and drives. */
export interface BridgeAudio {
  players: Pick<PlayersService, 'list' | 'setVolume' | 'attachZones' | 'detachZones'>;
  zones: Pick<ZonesService, 'list' | 'get' | 'setVolume' | 'setMuted' | 'setPower' | 'setTone' | 'allOff'>;
}

/** Scenes the bridge lists and applies, and the sleep timers it sets. */
export type BridgeScenes = Pick<ScenesService, 'list' | 'apply'>;
export type BridgeSleep = Pick<SleepTimers, 'set'>;
/** Stream players' now-playing, and the transport Home Assistant offers. */
export type BridgePlayback = Pick<Transport, 'get' | 'pause' | 'resume' | 'next' | 'previous'>;
/** Stream players' receivers: how each runs, and an admin's switch of one. */
export type BridgeReceivers = Pick<ReceiverSwitches, 'list' | 'set'>;

export interface CommandDomain {
  audio: BridgeAudio;
  scenes: BridgeScenes;
  sleep: BridgeSleep;
  playback: BridgePlayback;
  receivers: BridgeReceivers;
  /** The bridge's account as a caller, from current state; null when it is missing or disabled. */
  caller(): Caller | null;
}

/** Not acted on: the reason is logged at warn. */
class Rejected extends Error {}

export class CommandHandler {
  /** Latest volume per target, applied once per turn of the event loop (like the API's coalescing of a drag). */
  private readonly volumes = new Map<string, { topic: string; target: CommandTarget; volume: number }>();
  private flushing: NodeJS.Immediate | undefined;
  private warned = 0;
  private suppressed = 0;
  private windowStart = 0;

  constructor(
    private readonly topics: Topics,
    private readonly domain: CommandDomain,
    /** The bridge's logger: it names the component already, so lines here do not repeat it. */
    private readonly log: Logger,
  ) {}

  /** Never throws: whatever arrives, the worst outcome is a warning. */
  handle(topic: string, payload: Buffer): void {
    try {
      this.dispatch(topic, payload);
    } catch (err) {
      this.reject(topic, err);
    }
  }

  /** Logs (within the warning budget) a command that is not acted on for a reason the caller found. */
  ignore(topic: string, reason: string): void {
    this.reject(topic, new Rejected(reason));
  }

  stop(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    this.volumes.clear();
  }

  private dispatch(topic: string, payload: Buffer): void {
    const target = this.topics.parseCommand(topic);
    if (!target) throw new Rejected('not a command topic of this bridge');
    if (payload.length > MAX_COMMAND_BYTES)
      throw new Rejected(`payload of ${payload.length} bytes is longer than ${MAX_COMMAND_BYTES}`);
    const text = payload.toString('utf8');
    const caller = this.caller();
    if (target.kind === 'all-off') {
      if (text.trim().toUpperCase() !== PRESS)
        throw new Rejected(`expected ${PRESS}, got ${JSON.stringify(text.slice(0, 40))}`);
      this.settle(topic, this.domain.audio.zones.allOff(caller));
      return;
    }
    if (target.kind === 'scene') {
      if (text.trim().toUpperCase() !== ON)
        throw new Rejected(`expected ${ON}, got ${JSON.stringify(text.slice(0, 40))}`);
      // The apply waits for the amplifiers between its steps: the account is checked again before each one commits.
      this.settle(
        topic,
        this.domain.scenes.apply(caller, target.id, () => this.caller()),
      );
      return;
    }
    if (target.kind === 'receiver') return this.receiver(topic, caller, target.id, target.receiver, text);
    if (target.kind === 'player' && target.field !== 'volume')
      return this.transport(topic, caller, target.id, target.field, text);
    if (target.field === 'volume') {
      const volume = parsePercent(text);
      if (!volume.ok) throw new Rejected(volume.reason);
      this.volumes.set(topic, { topic, target, volume: volume.value });
      this.flushing ??= setImmediate(() => this.flushVolumes());
      return;
    }
    if (target.kind !== 'zone') throw new Rejected('not a command topic of this bridge');
    if (target.field === 'sleep') {
      const minutes = parseMinutes(text, MAX_SLEEP_MINUTES);
      if (!minutes.ok) throw new Rejected(minutes.reason);
      this.domain.sleep.set(caller, target.id, minutes.value);
      return;
    }
    if (target.field === 'power' || target.field === 'mute') {
      const on = parseOnOff(text);
      if (!on.ok) throw new Rejected(on.reason);
      const done =
        target.field === 'power'
          ? this.domain.audio.zones.setPower(caller, target.id, on.value)
          : this.domain.audio.zones.setMuted(caller, target.id, on.value);
      this.settle(topic, done);
      return;
    }
    if (target.field === 'loudness') {
      const on = parseOnOff(text);
      if (!on.ok) throw new Rejected(on.reason);
      this.settle(topic, this.domain.audio.zones.setTone(caller, target.id, { loudness: on.value }));
      return;
    }
    if (target.field === 'bass' || target.field === 'treble' || target.field === 'balance')
      return this.tone(topic, caller, target.id, target.field, text);
    this.selectSource(caller, target.id, text);
  }

  /** The detach option detaches the zone from its player; a player's label attaches the zone to that player. */
  private selectSource(caller: Caller, zoneId: string, label: string): void {
    const zone = this.domain.audio.zones.get(caller, zoneId);
    if (label === NO_SOURCE || label === LEGACY_NO_SOURCE) {
      if (zone.playerId) this.domain.audio.players.detachZones(caller, zone.playerId, [zone.id]);
      return;
    }
    // The labels the select offers: made from the bridged players only, as discovery made them.
    const players = bridgedPlayers(this.domain.audio.players.list(caller));
    const labels = sourceLabels(players);
    const player = players.find((p) => labels.get(p.id) === label);
    if (!player)
      throw new Rejected(
        `no player named ${JSON.stringify(label.slice(0, 60))}; options are ${NO_SOURCE} or ${[...labels.values()].join(', ')}`,
      );
    this.domain.audio.players.attachZones(caller, player.id, [zone.id]);
  }

  /**
   * A tone slider: the amplifier's native step from flat, as discovery offered it for this zone, onto the API's scale;
   * the tone call then checks the account and the control again, as for PUT /api/zones/{id}/tone.
   */
  private tone(topic: string, caller: Caller, zoneId: string, control: SteppedTone, text: string): void {
    const zone = this.domain.audio.zones.get(caller, zoneId);
    const steps = toneStepsOf(zone, control);
    const lacking = zone.toneControls[control];
    if (!steps)
      throw new Rejected(
        `zone "${zone.name}" has no ${control} control${lacking.available ? '' : `: ${lacking.reason}`}`,
      );
    const value = parseToneStep(text, steps, control);
    if (!value.ok) throw new Rejected(value.reason);
    this.settle(topic, this.domain.audio.zones.setTone(caller, zoneId, { [control]: value.value }));
  }

  /** A stream player's switch (ON plays, OFF pauses) and its next and previous buttons. */
  private transport(
    topic: string,
    caller: Caller,
    playerId: string,
    field: Exclude<PlayerCommand, 'volume'>,
    text: string,
  ): void {
    const { playback } = this.domain;
    // Checked again (role, assignment, still a stream player) when the player's turn comes, as for a request.
    if (field === 'playing') {
      const on = parseOnOff(text);
      if (!on.ok) throw new Rejected(on.reason);
      this.settle(
        topic,
        on.value
          ? playback.resume(caller, playerId, () => this.caller())
          : playback.pause(caller, playerId, () => this.caller()),
      );
      return;
    }
    if (text.trim().toUpperCase() !== PRESS)
      throw new Rejected(`expected ${PRESS}, got ${JSON.stringify(text.slice(0, 40))}`);
    this.settle(
      topic,
      field === 'next'
        ? playback.next(caller, playerId, () => this.caller())
        : playback.previous(caller, playerId, () => this.caller()),
    );
  }

  /**
   * A receiver's switch, through the same call as PUT /api/players/{id}/receivers/{kind}, which checks the account is
   * an Admin. Squeezelite's music server is not set over MQTT: a receiver switched on keeps the one it has.
   */
  private receiver(topic: string, caller: Caller, playerId: string, kind: ReceiverKindName, text: string): void {
    const on = parseOnOff(text);
    if (!on.ok) throw new Rejected(on.reason);
    const { receivers } = this.domain;
    const server = on.value ? (receivers.list(caller, playerId).find((r) => r.kind === kind)?.server ?? null) : null;
    this.settle(topic, receivers.set(caller, playerId, kind, { enabled: on.value, server }));
  }

  private flushVolumes(): void {
    this.flushing = undefined;
    const pending = [...this.volumes.values()];
    this.volumes.clear();
    for (const { topic, target, volume } of pending) {
      try {
        const caller = this.caller();
        if (target.kind === 'zone') this.settle(topic, this.domain.audio.zones.setVolume(caller, target.id, volume));
        else if (target.kind === 'player')
          this.settle(topic, this.domain.audio.players.setVolume(caller, target.id, volume));
      } catch (err) {
        this.reject(topic, err);
      }
    }
  }

  /**
   * Resolved per command, so role, assignment and enabled changes apply to the very next one; what the account may do
   * is checked by the service the command reaches, as for a request.
   */
  private caller(): Caller {
    const caller = this.domain.caller();
    if (!caller) throw new Rejected('the bridge account is missing or disabled');
    return caller;
  }

  private settle(topic: string, done: Promise<unknown>): void {
    done.catch((err: unknown) => this.reject(topic, err));
  }

  private reject(topic: string, err: unknown): void {
    if (!(err instanceof Rejected) && !(err instanceof DomainError)) {
      this.log.error({ topic, err }, 'MQTT command failed');
      return;
    }
    const now = Date.now();
    if (now - this.windowStart >= WARN_WINDOW_MS) {
      if (this.suppressed > 0) this.log.warn({ suppressed: this.suppressed }, 'more MQTT commands were ignored');
      this.windowStart = now;
      this.warned = 0;
      this.suppressed = 0;
    }
    if (this.warned >= WARN_BUDGET) {
      this.suppressed++;
      return;
    }
    this.warned++;
    const reason = err instanceof DomainError ? `${err.kind}: ${err.detail}` : err.message;
    this.log.warn({ topic, reason }, 'MQTT command ignored');
  }
}
