// The appliance's own mDNS host name, apart from the announcer so the HTTP Host check has it without loading ciao.

/** A host name of our own (never the OS's, which avahi may already own): `azc-` and the first 8 hex digits of the UDN. */
export function mdnsHostname(udn: string): string {
  return `azc-${udn
    .replace(/^uuid:/, '')
    .replace(/-/g, '')
    .slice(0, 8)
    .toLowerCase()}`;
}
