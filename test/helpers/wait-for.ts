// The suite's one way to wait: for a condition to hold, or for a promise to settle, always with a time limit, so a
// test that would hang fails instead and says what it was waiting for.

/** The default time limit: generous, since a failing wait is a failing test, never a slow passing one. */
export const WAIT_MS = 20_000;
/** How often a condition is re-checked when nothing signals a change. */
const POLL_MS = 10;

/** A change notice: whoever learns of something new calls notify(), and waitFor re-checks at once. */
export class Changes {
  private readonly listeners = new Set<() => void>();
  notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
  /** Returns a function that stops listening. */
  on(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export interface WaitOptions {
  /** Named in the error on timeout: "timed out after 10000 ms waiting for <what>". */
  what?: string;
  /** Re-check when this fires instead of polling. */
  changes?: Changes;
  /** What was seen meanwhile, added to the error on timeout, so a failure says more than what did not come. */
  seen?: () => string;
}

/**
 * Resolves with the first truthy value `condition` returns, re-checked on every change notice (or every 10 ms
 * without one); rejects after `timeoutMs`, or at once when the condition throws.
 */
export function waitFor<T>(
  condition: () => T | Promise<T>,
  timeoutMs = WAIT_MS,
  { what = 'a condition', changes, seen }: WaitOptions = {},
): Promise<NonNullable<T>> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let checking = false;
    let again = false;
    let poll: NodeJS.Timeout | undefined;
    const finish = (error: unknown, value?: NonNullable<T>) => {
      settled = true;
      clearTimeout(deadline);
      clearTimeout(poll);
      off?.();
      if (error === undefined) resolve(value!);
      else reject(error);
    };
    const deadline = setTimeout(
      () => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${seen ? `; seen: ${seen()}` : ''}`)),
      timeoutMs,
    );
    const check = async () => {
      if (settled) return;
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        const value = await condition();
        if (value) return finish(undefined, value as NonNullable<T>);
      } catch (err) {
        return finish(err);
      } finally {
        checking = false;
      }
      if (again) {
        again = false;
        return void check();
      }
      if (!changes && !settled) poll = setTimeout(() => void check(), POLL_MS);
    };
    const off = changes?.on(() => void check());
    void check();
  });
}

/** Awaits `promise` for at most `timeoutMs`: for a close, exit or event that must come, bounded. */
export async function within<T>(promise: Promise<T>, timeoutMs = WAIT_MS, what = 'a promise'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
