// Keeps the broker's retained topics equal to the view: sends what changed, clears what went away, and remembers
// every topic it left on the broker (across restarts and accounts), so none is ever left behind.
import { discoveryMessages } from './discovery.js';
import type { ResolvedBridgeOptions } from './options.js';
import type { Topics } from './topics.js';
import { type BridgeView, stateMessages } from './view.js';

/** Publishes retained; `done` (QoS 1 only) learns whether the broker acknowledged it. */
export type Send = (topic: string, payload: string, qos: 0 | 1, done?: (delivered: boolean) => void) => void;

/**
 * The retained topics the bridge left on one broker, kept in the store: the bridge that runs next (after a restart,
 * under another account, with another base topic) clears those it does not publish itself.
 */
export interface RetainedMemory {
  load(): string[];
  save(topics: ReadonlySet<string>): void;
}

export class StatePublisher {
  /** What the broker holds for us, as last sent by this bridge. */
  private readonly published = new Map<string, string>();
  /** Every topic the broker may hold for us: what this bridge sent, and what earlier ones left (the memory). */
  private readonly held: Set<string>;
  /** Set after a reconnect or a birth message: the next sync sends everything, changed or not. */
  private resendAll = true;
  /** A save of `held` after cleared topics were acknowledged: once per turn, however many acks came in it. */
  private saving: NodeJS.Immediate | undefined;
  /** `held` lost topics the store has not recorded yet (it was busy: a restore holds it); the next sync saves. */
  private unsaved = false;

  constructor(
    private readonly topics: Topics,
    private readonly options: ResolvedBridgeOptions,
    private readonly send: Send,
    private readonly memory: RetainedMemory,
  ) {
    this.held = new Set(memory.load());
  }

  /**
   * After a reconnect or Home Assistant's birth message: the next sync sends everything again. What was published
   * is still remembered, so things deleted while the broker was away are still cleared.
   */
  resend(): void {
    this.resendAll = true;
  }

  /** Sends the difference between the view and what the broker holds; returns how many messages went out. */
  sync(view: BridgeView): number {
    const discovery = discoveryMessages(view, this.topics, this.options);
    const state = stateMessages(view, this.topics);
    // The bridge publishes its availability itself (on connect, and as its last will); it is ours to keep.
    const wanted = (topic: string) => discovery.has(topic) || state.has(topic) || topic === this.topics.availability;
    const stale = [...this.held].filter((topic) => !wanted(topic));
    const added = [this.topics.availability, ...discovery.keys(), ...state.keys()].filter(
      (topic) => !this.held.has(topic),
    );
    // Remembered before it is sent: a crash in between must not leave a topic nobody knows to clear. While the store
    // refuses writes (a restore holds it) this throws and nothing is sent; the sync after the restore sends it all.
    if (added.length > 0 || this.unsaved) {
      this.memory.save(new Set([...this.held, ...added]));
      for (const topic of added) this.held.add(topic);
      this.unsaved = false;
    }
    let sent = 0;
    // An empty retained message deletes the entity in Home Assistant (and the stale state for anyone else). A
    // topic is forgotten only once the broker took the clear: one lost with the connection is cleared next time.
    for (const topic of stale) {
      this.published.delete(topic);
      this.send(topic, '', 1, (delivered) => delivered && this.forget(topic));
      sent++;
    }
    // Configs before states, so a hub creates the entity before its first value arrives.
    for (const [messages, qos] of [
      [discovery, 1],
      [state, 0],
    ] as const) {
      for (const [topic, payload] of messages) {
        if (!this.resendAll && this.published.get(topic) === payload) continue;
        this.published.set(topic, payload);
        this.send(topic, payload, qos);
        sent++;
      }
    }
    this.resendAll = false;
    return sent;
  }

  /** Writes a save still waiting for its turn (the bridge is stopping). */
  flush(): void {
    if (!this.saving) return;
    clearImmediate(this.saving);
    this.saving = undefined;
    this.saveForgotten();
  }

  private forget(topic: string): void {
    // Published again since the clear went out (the zone came back into view): still held.
    if (this.published.has(topic) || !this.held.delete(topic)) return;
    this.saving ??= setImmediate(() => {
      this.saving = undefined;
      this.saveForgotten();
    });
  }

  /**
   * Records topics the broker has cleared. A store that cannot take it now is no loss: until the next save the
   * memory names a topic too many, and clearing a topic twice is harmless.
   */
  private saveForgotten(): void {
    try {
      this.memory.save(this.held);
    } catch {
      this.unsaved = true;
    }
  }

  /** How many retained topics the broker holds for us. */
  get size(): number {
    return this.held.size;
  }
}
