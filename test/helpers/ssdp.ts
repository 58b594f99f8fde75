// SSDP messages as the discovery tests read and send them: a datagram's start line and headers, and an M-SEARCH.

export const SSDP_GROUP = '239.255.255.250';

export interface SsdpMessage {
  /** `NOTIFY * HTTP/1.1`, `HTTP/1.1 200 OK`, ... */
  startLine: string;
  /** By upper-case name, values trimmed. */
  headers: Record<string, string>;
}

export function parseSsdp(message: Buffer): SsdpMessage {
  const [startLine = '', ...lines] = message.toString('utf8').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toUpperCase()] = line.slice(colon + 1).trim();
  }
  return { startLine, headers };
}

/** An M-SEARCH for search target `st`, its HOST naming the SSDP group on `port`. */
export function mSearch(st: string, port = 1900): string {
  return [
    'M-SEARCH * HTTP/1.1',
    `HOST: ${SSDP_GROUP}:${port}`,
    'MAN: "ssdp:discover"',
    'MX: 1',
    `ST: ${st}`,
    '',
    '',
  ].join('\r\n');
}
