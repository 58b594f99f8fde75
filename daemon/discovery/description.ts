// UPnP 1.0 device description (`GET /description.xml`) that SSDP's LOCATION header points at.

/** Our own device type; the root device is also announced as the generic Basic:1 device (see ssdp.ts). */
export const AZC_DEVICE_TYPE = 'urn:audio-zone-control:device:AudioZoneController:1';
export const UPNP_BASIC_DEVICE_TYPE = 'urn:schemas-upnp-org:device:Basic:1';

/** Namespace of the vendor extension elements (UPnP DA 1.0 §2.1: vendor elements live in their own namespace). */
export const AZC_XML_NAMESPACE = 'urn:audio-zone-control:device-1-0';

export interface DescriptionInfo {
  /** `uuid:<uuid>` or a bare uuid; kept in the database so it never changes. */
  udn: string;
  friendlyName: string;
  manufacturer: string;
  modelName: string;
  /** The daemon version. */
  modelNumber: string;
  serialNumber: string;
  /** The dashboard, absolute (`http://host:8080/`) or relative to LOCATION (`/`). */
  presentationURL: string;
  /** Base of the REST API (`http://host:8080/api` or `/api`), as `<azc:apiBaseURL>`. */
  apiBaseURL: string;
  /** Usually AZC_DEVICE_TYPE. */
  deviceType: string;
}

// Characters XML 1.0 cannot carry at all (C0 controls other than tab/LF/CR, lone surrogates, U+FFFE/U+FFFF).
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Escapes text for an XML element; characters XML cannot represent become U+FFFD instead of breaking the file. */
export function escapeXml(value: string): string {
  return value.replace(NOT_XML_CHAR, '\uFFFD').replace(/[&<>"']/g, (ch) => ENTITIES[ch] ?? ch);
}

/** Returns `uuid:<uuid>` for either spelling. */
export function normalizeUdn(udn: string): string {
  return udn.startsWith('uuid:') ? udn : `uuid:${udn}`;
}

export function renderDescription(info: DescriptionInfo): string {
  const element = (name: string, value: string) => `    <${name}>${escapeXml(value)}</${name}>`;
  // Element order follows the UPnP Device Architecture 1.0 device template.
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<root xmlns="urn:schemas-upnp-org:device-1-0" xmlns:azc="${AZC_XML_NAMESPACE}">`,
    '  <specVersion>',
    '    <major>1</major>',
    '    <minor>0</minor>',
    '  </specVersion>',
    '  <device>',
    element('deviceType', info.deviceType),
    element('friendlyName', info.friendlyName),
    element('manufacturer', info.manufacturer),
    element('modelName', info.modelName),
    element('modelNumber', info.modelNumber),
    element('serialNumber', info.serialNumber),
    element('UDN', normalizeUdn(info.udn)),
    element('presentationURL', info.presentationURL),
    element('azc:apiBaseURL', info.apiBaseURL),
    '  </device>',
    '</root>',
    '',
  ].join('\n');
}
