// A network namespace with a veth pair to the test's side, for receivers that refuse loopback (libupnp) or that
// advertise on the LAN (AirPlay through Avahi): what they open stays inside a network the test itself makes.
import { spawnSync } from 'node:child_process';
import { createNetwork } from './netns.js';

export type VethNetwork =
  | {
      ok: true;
      /** The namespace: run the receiver with `ip netns exec <ns>`. */
      ns: string;
      /** The interface inside the namespace, and its address. */
      nsIf: string;
      address: string;
      /** The test's end of the pair, and its address: reachable from inside the namespace. */
      hostIf: string;
      hostAddress: string;
    }
  | { ok: false; why: string };

/**
 * The first 10.<octet>.x.0/24 from x = pid % 250 on that no interface here has an address in: a network left behind
 * by a run that was killed (its teardown never ran) keeps its host side, and a new pair on the same subnet would be
 * routed to the old one.
 */
function freeSubnet(octet: number): string {
  const addresses = spawnSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' }).stdout ?? '';
  for (let step = 0; step < 250; step++) {
    const subnet = `10.${octet}.${(process.pid + step) % 250}`;
    if (!addresses.includes(` ${subnet}.`)) return subnet;
  }
  throw new Error(`every 10.${octet}.x.0/24 has an address here: remove the test networks left behind (ip netns list)`);
}

/**
 * Makes namespace `azc-<tag>-<pid>` (deleted in teardown) with a veth pair on a free 10.<octet>.x.0/24 (freeSubnet): the
 * test's side is .1, the namespace's .2. `tag` is two letters, so that interface names stay within 15 characters;
 * `octet` differs between test files, so that two files running at once never share a subnet.
 */
export function vethNetwork(t: { teardown(fn: () => unknown): void }, tag: string, octet: number): VethNetwork {
  const id = `${process.pid % 100_000}`;
  const ns = `azc-${tag}-${id}`;
  const [hostIf, nsIf] = [`az${tag}${id}h`, `az${tag}${id}n`];
  const subnet = freeSubnet(octet);
  const made = createNetwork(
    t,
    [ns],
    [
      ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', ns],
      ['addr', 'add', `${subnet}.1/24`, 'dev', hostIf],
      ['link', 'set', hostIf, 'up'],
      ['-n', ns, 'addr', 'add', `${subnet}.2/24`, 'dev', nsIf],
      ['-n', ns, 'link', 'set', nsIf, 'up'],
      ['-n', ns, 'link', 'set', 'lo', 'up'],
    ],
  );
  if (!made.ok) return made;
  // Deleting one end deletes the pair at once; the namespace's own clean-up is asynchronous, and would leave the
  // names taken for the next test while a receiver still runs in it.
  t.teardown(() => spawnSync('ip', ['link', 'delete', hostIf]));
  return { ok: true, ns, nsIf, address: `${subnet}.2`, hostIf, hostAddress: `${subnet}.1` };
}
