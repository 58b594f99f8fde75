// Keeps the broker's retained topics equal to the view: sends what changed, clears what went away.
import { discoveryMessages } from './discovery.js';
import type { ResolvedBridgeOptions } from './options.js';
import type { Topics } from './topics.js';
import { stateMessages, type BridgeView } from './view.js';

export type Send = (topic: string, payload: string, qos: 0 | 1) => void;

export class StatePublisher {
  /** What the broker holds for us, as last sent. */
  private readonly published = new Map<string, string>();
  /** Set after a reconnect or a birth message: the next sync sends everything, changed or not. */
  private resendAll = true;

  constructor(
    private readonly topics: Topics,
    private readonly options: ResolvedBridgeOptions,
    private readonly send: Send,
  ) {}

  /**
   * After a reconnect or Home Assistant's birth message: the next sync sends everything again. What was published
   * is still remembered, so things deleted while the broker was away are still cleared.
   */
  resend(): void {
    this.resendAll = true;
  }

  /**
   * A retained message the broker held for us from before (an earlier run of the daemon): remembered as published,
   * so the next sync clears it when the view no longer has it (a zone deleted, an amplifier taken out of the
   * configuration while the daemon was down).
   */
  learn(topic: string, payload: string): void {
    if (payload !== '' && !this.published.has(topic)) this.published.set(topic, payload);
  }

  /** Sends the difference between the view and what was published; returns how many messages went out. */
  sync(view: BridgeView): number {
    const discovery = discoveryMessages(view, this.topics, this.options);
    const state = stateMessages(view, this.topics);
    let sent = 0;
    // An empty retained message deletes the entity in Home Assistant (and the stale state for anyone else).
    for (const topic of [...this.published.keys()]) {
      if (discovery.has(topic) || state.has(topic)) continue;
      this.published.delete(topic);
      this.send(topic, '', 1);
      sent++;
    }
    // Configs before states, so a hub creates the entity before its first value arrives.
    for (const [messages, qos] of [[discovery, 1], [state, 0]] as const) {
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

  /** How many retained topics the broker holds for us. */
  get size(): number {
    return this.published.size;
  }
}
