// UPnP 1.0 device description (`GET /description.xml`) that SSDP's LOCATION header points at, and the types SSDP
// announces from it: the one place both come from, so what is announced is what the description declares.
import { createHash } from 'node:crypto';

/**
 * The vendor domain of our own types: `audio-zone-control.local`, the name the project already uses for its problem
 * types; `.local` is reserved (RFC 6762), so no other vendor can own it. UPnP writes a vendor domain's periods as
 * hyphens (Device Architecture, device and service types), as in `schemas-upnp-org` for schemas.upnp.org.
 */
export const AZC_VENDOR_DOMAIN = 'audio-zone-control-local';
/** The controller: an embedded device of the root device, with a UDN of its own (controllerUdn). */
export const AZC_DEVICE_TYPE = `urn:${AZC_VENDOR_DOMAIN}:device:AudioZoneController:1`;
/** The root device: the generic Basic:1 device, which generic UPnP tools list. */
export const UPNP_BASIC_DEVICE_TYPE = 'urn:schemas-upnp-org:device:Basic:1';

/** Namespace of the vendor extension elements (UPnP DA 1.0 §2.1: vendor elements live in their own namespace). */
export const AZC_XML_NAMESPACE = `urn:${AZC_VENDOR_DOMAIN}:device-1-0`;

/**
 * The embedded controller's UDN: a name-based UUID (version 5) of the root's, so it is as stable as the root's (kept
 * in the database) and differs from it, as UPnP requires of every device in a description.
 */
export function controllerUdn(rootUdn: string): string {
  const root = normalizeUdn(rootUdn).slice('uuid:'.length).replace(/-/g, '');
  const hash = createHash('sha1').update(Buffer.from(root, 'hex')).update('AudioZoneController').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * What SSDP announces and answers for the description (UPnP DA 1.1 §1.1.2): NT (or ST) and USN of each. The root device
 * three times (upnp:rootdevice, its UDN, its type), the embedded controller twice (its UDN, its type).
 */
export function advertisements(rootUdn: string): Array<{ nt: string; usn: string }> {
  const root = normalizeUdn(rootUdn);
  const controller = controllerUdn(root);
  return [
    { nt: 'upnp:rootdevice', usn: `${root}::upnp:rootdevice` },
    { nt: root, usn: root },
    { nt: UPNP_BASIC_DEVICE_TYPE, usn: `${root}::${UPNP_BASIC_DEVICE_TYPE}` },
    { nt: controller, usn: controller },
    { nt: AZC_DEVICE_TYPE, usn: `${controller}::${AZC_DEVICE_TYPE}` },
  ];
}

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
}

// Characters XML 1.0 cannot carry at all (C0 controls other than tab/LF/CR, lone surrogates, U+FFFE/U+FFFF).
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

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
  const element = (indent: string, name: string, value: string) => `${indent}<${name}>${escapeXml(value)}</${name}>`;
  const udn = normalizeUdn(info.udn);
  // Element order follows the UPnP Device Architecture 1.0 device template (deviceList before presentationURL).
  const device = (indent: string, deviceType: string, deviceUdn: string, inner: string[]) => [
    `${indent}<device>`,
    element(`${indent}  `, 'deviceType', deviceType),
    element(`${indent}  `, 'friendlyName', info.friendlyName),
    element(`${indent}  `, 'manufacturer', info.manufacturer),
    element(`${indent}  `, 'modelName', info.modelName),
    element(`${indent}  `, 'modelNumber', info.modelNumber),
    element(`${indent}  `, 'serialNumber', info.serialNumber),
    element(`${indent}  `, 'UDN', deviceUdn),
    ...inner,
    element(`${indent}  `, 'presentationURL', info.presentationURL),
    element(`${indent}  `, 'azc:apiBaseURL', info.apiBaseURL),
    `${indent}</device>`,
  ];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<root xmlns="urn:schemas-upnp-org:device-1-0" xmlns:azc="${AZC_XML_NAMESPACE}">`,
    '  <specVersion>',
    '    <major>1</major>',
    '    <minor>0</minor>',
    '  </specVersion>',
    ...device('  ', UPNP_BASIC_DEVICE_TYPE, udn, [
      '    <deviceList>',
      ...device('      ', AZC_DEVICE_TYPE, controllerUdn(udn), []),
      '    </deviceList>',
    ]),
    '</root>',
    '',
  ].join('\n');
}
