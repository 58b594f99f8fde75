// A network namespace for AirPlay tests: a veth pair to the test's side and Avahi on a private D-Bus inside it
// (shairport-sync 3.3.8 exits without one), and, when asked, a stand-in sender's remote control (DACP) on the test's
// side of the pair that this Avahi announces.
import type { Test } from 'tap';
import { startAvahi } from './avahi.js';
import { DACP_ID, DacpServer } from './raop-sender.js';
import { vethNetwork } from './veth-network.js';

/**
 * Makes the namespace (`tag` and `octet` as vethNetwork takes them, one pair per test file) and starts its Avahi.
 * `dacp`: with a DacpServer on the test's side, announced as `iTunes_Ctrl_<DACP-ID>._dacp._tcp` from a static service
 * file (a sender's own responder announces it on a LAN; avahi-publish is not installed here). Not ok, with why,
 * where namespaces cannot be made.
 */
export async function airplayNetwork(t: Test, { tag, octet, dacp: withDacp = false }: AirplayNetworkOptions) {
  const made = vethNetwork(t, tag, octet);
  if (!made.ok) return { ok: false as const, why: made.why };
  const { ns, nsIf } = made;
  const dacp = withDacp ? await DacpServer.listen(made.hostAddress) : undefined;
  if (dacp) t.teardown(() => dacp.close());
  const services = dacp ? [{ name: `iTunes_Ctrl_${DACP_ID}`, type: '_dacp._tcp', port: dacp.port }] : [];
  const { env, dir } = await startAvahi(t, { ns, link: nsIf, services });
  return { ok: true as const, ns, nsIf, address: made.address, env, dir, dacp };
}

export interface AirplayNetworkOptions {
  tag: string;
  octet: number;
  dacp?: boolean;
}

export type AirplayNetwork = Extract<Awaited<ReturnType<typeof airplayNetwork>>, { ok: true }>;
