// SSDP and mDNS announcers, loaded together on demand: the installed service runs both, and one module loaded means
// one bundle chunk for node to resolve and read at start instead of three (scripts/bundle.mjs).

export { MdnsAnnouncer } from './mdns.js';
export { SsdpAnnouncer } from './ssdp.js';
