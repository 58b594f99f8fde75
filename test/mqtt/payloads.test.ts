// The wire format of values and the command topics the bridge accepts, without a broker.
import t from 'tap';
import { parseOnOff, parsePercent, percent, sourceLabels } from '../../daemon/mqtt/payloads.js';
import { Topics } from '../../daemon/mqtt/topics.js';

const ID = '0b8e7c1a-5a4e-4f55-9a55-0d5c3e2e9f01';

t.test('volumes are percentages with at most one decimal, and commands accept exactly 0 to 100', async (t) => {
  t.equal(percent(0.5), '50');
  t.equal(percent(1 / 3), '33.3');
  t.same(parsePercent('42.5'), { ok: true, value: 0.425 });
  for (const bad of ['', '-1', '100.1', '1e2', '0x10', 'NaN', ' ', '50%', '{"v":1}']) t.equal(parsePercent(bad).ok, false, bad);
});

t.test('switch commands are ON or OFF in any letter case and nothing else', async (t) => {
  t.same(parseOnOff('on'), { ok: true, value: true });
  t.same(parseOnOff('OFF'), { ok: true, value: false });
  for (const bad of ['1', 'true', 'ONN', '']) t.equal(parseOnOff(bad).ok, false, bad);
});

t.test('players sharing a name, or named like the "none" option, get distinct labels', async (t) => {
  const player = (id: string, name: string) => ({ id, name, volume: 0, zoneIds: [], input: { amplifier: 'simulated', driver: 'simulated', channel: 1 }, state: 'idle' as const, available: true, unavailableReason: null });
  const labels = sourceLabels([player('aaaaaaaa-1', 'Den'), player('bbbbbbbb-2', 'Den'), player('cccccccc-3', 'None'), player('dddddddd-4', 'Hall')]);
  t.same([...labels.values()], ['Den (aaaaaaaa)', 'Den (bbbbbbbb)', 'None (cccccccc)', 'Hall']);
});

t.test('only command topics under the base topic with a UUID and a known field are commands', async (t) => {
  const topics = new Topics('azc/test', 'homeassistant');
  t.same(topics.parseCommand(`azc/test/zone/${ID}/volume/set`), { kind: 'zone', id: ID, field: 'volume' });
  t.same(topics.parseCommand(`azc/test/player/${ID}/volume/set`), { kind: 'player', id: ID, field: 'volume' });
  t.same(topics.parseCommand('azc/test/all_off/set'), { kind: 'all-off' });
  for (const bad of [`azc/test/zone/${ID}/volume`, `azc/test/zone/${ID}/colour/set`, `azc/test/player/${ID}/power/set`, 'azc/test/zone/x/volume/set', `azc/other/zone/${ID}/volume/set`, `azc/test/zone/${ID}/volume/set/set`]) {
    t.equal(topics.parseCommand(bad), undefined, bad);
  }
});
