// A stream player's Casting dialog in Debian chromium against a real daemon (its players real MPDs, its receivers run
// by a stand-in runtime that starts no program): an admin switches Squeezelite on and off and sets its music server,
// each receiver's state is said in words and follows the daemon's events, a refusal is said in the dashboard's words
// and changes nothing, and an operator gets no switches.

import t from 'tap';
import type { ReceiverRunState, ReceiverRuntime, WantedReceiver } from '../../daemon/domain/playback/index.js';
import { programMissing, STOPPED_RECEIVER } from '../../daemon/domain/playback/index.js';
import type { ReceiverKindName } from '../../drivers/index.js';
import { createUser } from '../helpers/inject.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { eventually, PHONE, signIn, unlabelled } from './session.js';

/** Runs nothing: a receiver handed to it reads as running, a state the test sets shows, a kind told absent is missing. */
class StandInRuntime implements ReceiverRuntime {
  readonly absent = new Set<ReceiverKindName>(['upnp']);
  readonly states = new Map<string, ReceiverRunState>();
  readonly calls: WantedReceiver[][] = [];
  async apply(playerId: string, wanted: readonly WantedReceiver[]): Promise<void> {
    this.calls.push([...wanted]);
    for (const kind of ['airplay', 'upnp', 'squeezelite'] as const) {
      const running = wanted.some((w) => w.kind === kind);
      this.states.set(
        `${playerId}/${kind}`,
        running ? { phase: 'running', cast: 'idle', detail: null } : STOPPED_RECEIVER,
      );
    }
  }
  state(playerId: string, kind: ReceiverKindName): ReceiverRunState {
    return this.states.get(`${playerId}/${kind}`) ?? STOPPED_RECEIVER;
  }
  /** Looked up where no program is: the daemon's own message, naming the package. */
  missing(kind: ReceiverKindName): string | undefined {
    return this.absent.has(kind) ? programMissing(kind, '') : undefined;
  }
}

interface Receiver {
  kind: ReceiverKindName;
  enabled: boolean;
  server: string | null;
}

t.test("a stream player's receivers in the dashboard", { skip: chromiumMissing() }, async (t) => {
  const runtime = new StandInRuntime();
  const rig = await startStreamDaemon(t, { receiverRuntime: runtime });
  const { api } = rig;
  const created = await api.post('/api/players', {
    name: 'Den stream',
    input: { channel: 1 },
    output: { kind: 'null' },
  });
  t.equal(created.status, 201);
  const id = created.body.id as string;
  const receiver = async (kind: ReceiverKindName) =>
    ((await api.get(`/api/players/${id}/receivers`)).body.items as Receiver[]).find((r) => r.kind === kind)!;
  const browser = await launch(t);

  t.test(
    'on a phone, an admin switches Squeezelite on, sets its server, sees refusals in words, and switches it off',
    async (t) => {
      const { page, console } = await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword, PHONE);
      console.allow(/status of 40[09] \((Bad Request|Conflict)\)/);
      await page.getByRole('button', { name: 'Casting on Den stream' }).click();
      const dialog = page.getByRole('dialog', { name: 'Casting on Den stream' });
      const row = (kind: string) => dialog.locator(`.receiver[data-kind="${kind}"]`);
      const squeezelite = dialog.getByRole('switch', { name: 'Squeezelite' });
      await row('upnp').getByText('Not installed — apt-get install --no-install-recommends gmediarender').waitFor();
      t.ok(
        await dialog.getByRole('switch', { name: 'UPnP/DLNA' }).isDisabled(),
        'a missing program cannot be switched on',
      );
      t.equal(await row('squeezelite').locator('.tone-reason').textContent(), 'Off');
      t.same(await unlabelled(page, 'dialog'), [], 'every control of the dialog has a name');

      await squeezelite.check();
      await row('squeezelite').getByText('Ready', { exact: true }).waitFor();
      t.match(await receiver('squeezelite'), { enabled: true, server: null }, 'on, its server found on the LAN');
      t.same(runtime.calls.at(-1), [{ kind: 'squeezelite', server: null }]);

      runtime.states.set(`${id}/squeezelite`, { phase: 'running', cast: 'playing', detail: null });
      rig.d.daemon.services.receivers.stateChanged(id, 'squeezelite');
      await row('squeezelite').getByText('Casting', { exact: true }).waitFor();

      const server = dialog.getByLabel('Music server');
      await server.fill('lms lan!');
      const calls = runtime.calls.length;
      await dialog.getByRole('button', { name: 'Use this server' }).click();
      const alert = dialog.getByRole('alert');
      await alert.getByText(/^Music server: must be the music server as host or host:port/).waitFor();
      t.notMatch(await alert.textContent(), /[{}"]/, 'in words, not the JSON of the answer');
      t.match(await receiver('squeezelite'), { enabled: true, server: null }, 'nothing changed');
      t.equal(runtime.calls.length, calls, 'the runtime was not asked');
      t.ok(await squeezelite.isChecked(), 'the switch stays on');

      await server.fill('lms.lan:9000');
      await server.press('Enter');
      await eventually(async () => (await receiver('squeezelite')).server === 'lms.lan:9000', 'the server');
      t.ok(await alert.isHidden(), 'the refusal is gone once the server is taken');
      t.ok(await dialog.isVisible(), 'Enter in the field uses the server without closing the dialog');
      const fits = await dialog.evaluate((el: any) => el.scrollWidth <= el.clientWidth);
      t.ok(fits, 'the dialog is no wider than a phone');
      await screenshot(page, 'casting-dialog-phone', false);

      // A running AirPlay receiver says which AirPlay it runs.
      const airplay = dialog.getByRole('switch', { name: 'AirPlay' });
      await airplay.check();
      await row('airplay').getByText('Ready', { exact: true }).waitFor();
      runtime.states.set(`${id}/airplay`, { phase: 'running', cast: 'idle', detail: null, variant: 'AirPlay 2' });
      rig.d.daemon.services.receivers.stateChanged(id, 'airplay');
      await row('airplay').getByText('Ready (AirPlay 2)', { exact: true }).waitFor();
      await airplay.uncheck();
      await row('airplay').getByText('Off', { exact: true }).waitFor();

      // Shairport-sync goes away while the dialog is open: switching AirPlay on is refused, naming the package.
      runtime.absent.add('airplay');
      await dialog.getByRole('switch', { name: 'AirPlay' }).click();
      await alert
        .getByText(/^Shairport-sync is not installed.*apt-get install --no-install-recommends shairport-sync/)
        .waitFor();
      await eventually(async () => !(await dialog.getByRole('switch', { name: 'AirPlay' }).isChecked()), 'AirPlay off');
      t.match(await receiver('airplay'), { enabled: false }, 'AirPlay was not switched on');
      await row('airplay')
        .getByText('Not installed — apt-get install --no-install-recommends shairport-sync')
        .waitFor();
      t.ok(await dialog.getByRole('switch', { name: 'AirPlay' }).isDisabled(), 'and its row says why');

      await squeezelite.focus();
      await page.keyboard.press('Space');
      await row('squeezelite').getByText('Off', { exact: true }).waitFor();
      t.match(await receiver('squeezelite'), { enabled: false }, 'switched off from the keyboard');
      t.same(runtime.calls.at(-1), [], 'the runtime runs none');
      await dialog.getByRole('button', { name: 'Done' }).click();
      await dialog.waitFor({ state: 'detached' });
      t.same(console.errors, []);
      await page.context().close();
    },
  );

  t.test('an operator of the player sees its card but no Casting switches', async (t) => {
    const operator = await createUser(api, 'olivia', 'Operator', { playerIds: [id], zoneIds: [] });
    const { page, console } = await signIn(browser, rig.d.base, 'olivia', operator.password);
    await page.getByRole('heading', { name: 'Den stream', exact: true }).waitFor();
    t.equal(await page.getByRole('button', { name: /Casting/ }).count(), 0, 'no Casting button');
    t.same(console.errors, []);
    await page.context().close();
  });
});
