// The dashboard's sender of a control's latest value (daemon/ui/js/latest-sender.js), shared by the volume sliders and
// the Sound panel, driven step by step: each request is answered when the test says, and reports arrive in between, in
// the orders a busy machine can give. The module runs here as the browser runs it (it needs only timers).

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { UI_DIR } from '../../daemon/paths.js';

type Sender = {
  readonly busy: boolean;
  forget(): void;
  reported(value: number): void;
  push(value: number): Promise<void>;
};
type Options = {
  send: (value: number) => Promise<unknown>;
  onError: (error: Error) => void;
  onIdle: () => void;
  handHeld: () => boolean;
  isEcho?: (reported: number, sent: number) => boolean;
  marks?: { setAttribute(name: string, value: string): void; removeAttribute(name: string): void };
};
const { latestSender } = (await import(pathToFileURL(path.join(UI_DIR, 'js', 'latest-sender.js')).href)) as {
  latestSender: (o: Options) => Sender;
};

/** A sender whose requests wait for `answer()`; `sent` lists what went out, `idle` counts the times it went idle. */
function harness(extra: Partial<Options> = {}) {
  const sent: number[] = [];
  const answers: Array<(error?: Error) => void> = [];
  const errors: Error[] = [];
  const marks: string[] = [];
  let hand = false;
  let idle = 0;
  let wake: (() => void) | null = null;
  const changed = () => {
    wake?.();
    wake = null;
  };
  const sender = latestSender({
    send: (value) => {
      sent.push(value);
      changed();
      return new Promise<void>((resolve, reject) => answers.push((error) => (error ? reject(error) : resolve())));
    },
    onError: (error) => errors.push(error),
    onIdle: () => {
      idle++;
      changed();
    },
    handHeld: () => hand,
    marks: {
      setAttribute: (name, value) => marks.push(`${name}=${value}`),
      removeAttribute: (name) => marks.push(`-${name}`),
    },
    ...extra,
  });
  /** Resolves once `done()` holds, checked after each request starts and each time the sender goes idle. */
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise<void>((resolve) => (wake = resolve));
  };
  return {
    sender,
    sent,
    errors,
    marks,
    until,
    get idle() {
      return idle;
    },
    hold: (on: boolean) => {
      hand = on;
    },
    /** Answers the oldest request still waiting. */
    answer: (error?: Error) => answers.shift()!(error),
  };
}

t.test('one request in flight carries only the latest value', async (t) => {
  const h = harness();
  void h.sender.push(0.1);
  await h.until(() => h.sent.length === 1);
  void h.sender.push(0.2);
  void h.sender.push(0.3);
  h.answer();
  await h.until(() => h.sent.length === 2);
  t.same(h.sent, [0.1, 0.3], '0.2 was overtaken by 0.3 before it could go');
  h.answer();
  await h.until(() => h.idle === 1);
  void h.sender.push(0.3);
  t.equal(h.sender.busy, false, 'the value it has sent is not sent again');
  t.same(h.marks, ['aria-busy=true', '-aria-busy', 'aria-busy=true', '-aria-busy'], 'busy while a value is on its way');
});

t.test('a report seen while the hand holds the control and a value is in flight sends it again', async (t) => {
  const h = harness();
  h.hold(true);
  void h.sender.push(0.3);
  await h.until(() => h.sent.length === 1);
  h.sender.reported(0.9);
  h.hold(false);
  h.answer();
  await h.until(() => h.sent.length === 2);
  t.same(h.sent, [0.3, 0.3], 'the released value goes again over the change seen before the hand let go');
  h.answer();
  await h.until(() => h.idle === 1);
  t.equal(h.sent.length, 2);
});

t.test('a report seen after the hand let go stays: the value in flight is not sent again over it', async (t) => {
  const h = harness();
  h.hold(true);
  void h.sender.push(0.3);
  await h.until(() => h.sent.length === 1);
  h.hold(false);
  h.sender.reported(0.9);
  h.answer();
  await h.until(() => h.idle === 1);
  t.same(h.sent, [0.3], 'one request: the later change of another client wins');
  void h.sender.push(0.3);
  await h.until(() => h.sent.length === 2);
  t.same(h.sent, [0.3, 0.3], 'a new push after that report sends the value again');
  h.answer();
  await h.until(() => h.idle === 2);
});

t.test('the echo of a value sent is no news, within what the amplifier makes of it', async (t) => {
  const h = harness({ isEcho: (reported, sent) => Math.abs(reported - sent) < 0.01 });
  h.hold(true);
  void h.sender.push(0.3);
  await h.until(() => h.sent.length === 1);
  void h.sender.push(0.2);
  h.sender.reported(0.305);
  h.answer();
  await h.until(() => h.sent.length === 2);
  h.sender.reported(0.2);
  h.hold(false);
  h.answer();
  await h.until(() => h.idle === 1);
  t.same(h.sent, [0.3, 0.2], 'no value went twice');
});

t.test('a failed request is reported, and the next push sends again', async (t) => {
  const h = harness();
  void h.sender.push(0.4);
  await h.until(() => h.sent.length === 1);
  void h.sender.push(0.5);
  h.answer(new Error('refused'));
  await h.until(() => h.idle === 1);
  t.same(
    h.errors.map((e) => e.message),
    ['refused'],
  );
  t.same(h.sent, [0.4], 'nothing more after the failure');
  void h.sender.push(0.4);
  await h.until(() => h.sent.length === 2);
  h.answer();
  await h.until(() => h.idle === 2);
  t.same(h.sent, [0.4, 0.4]);
});

t.test('a new gesture sends its value even when it was the last one sent', async (t) => {
  const h = harness();
  void h.sender.push(0.6);
  await h.until(() => h.sent.length === 1);
  h.answer();
  await h.until(() => h.idle === 1);
  h.sender.forget();
  void h.sender.push(0.6);
  await h.until(() => h.sent.length === 2);
  h.answer();
  await h.until(() => h.idle === 2);
  t.same(h.sent, [0.6, 0.6]);
});
