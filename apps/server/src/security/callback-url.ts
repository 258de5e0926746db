import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { AppConfig } from '../config.js';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const privateOrReserved = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24], // documentation (TEST-NET-1..3): never a real receiver
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  privateOrReserved.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32], // documentation
  ['2001::', 32], // Teredo: the client's IPv4 address is obfuscated, so no telling where it leads
  ['64:ff9b:1::', 48], // local-use NAT64
] as const) {
  privateOrReserved.addSubnet(net, prefix, 'ipv6');
}

export type AddressClass = 'public' | 'loopback' | 'private';

/** The eight 16-bit groups of an IPv6 address. */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number);
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array(missing).fill('0'), ...right].map((g) => Number.parseInt(g, 16));
}

const ipv4From = (high: number, low: number) =>
  `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/** The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (g.length !== 8) return null;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && g[5] === 0xffff) return ipv4From(g[6]!, g[7]!); // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return ipv4From(g[6]!, g[7]!); // NAT64 64:ff9b::/96
  if (g[0] === 0x2002) return ipv4From(g[1]!, g[2]!); // 6to4 2002::/16
  return null;
}

export function classifyAddress(address: string): AddressClass {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const embedded = family === 'ipv6' ? embeddedIpv4(address) : null;
  if (embedded) return classifyAddress(embedded);
  if (loopback.check(address, family)) return 'loopback';
  if (privateOrReserved.check(address, family)) return 'private';
  return 'public';
}

export interface CallbackPolicy {
  allowLoopback: boolean;
  allowPrivate: boolean;
  allowPlainHttpLocalhost: boolean;
}

/** The one allow/deny rule for an address webhooks may reach: public always, loopback and private only when the operator allowed them. */
export function isAddressAllowed(address: string, policy: CallbackPolicy): boolean {
  return isClassAllowed(classifyAddress(address), policy);
}

function isClassAllowed(kind: AddressClass, policy: CallbackPolicy): boolean {
  return (
    kind === 'public' ||
    (kind === 'loopback' && policy.allowLoopback) ||
    (kind === 'private' && policy.allowPrivate)
  );
}

export function callbackPolicy(config: AppConfig): CallbackPolicy {
  return {
    allowLoopback: config.isDevelopment || config.WEBHOOK_ALLOW_LOOPBACK,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    allowPlainHttpLocalhost: config.isDevelopment || config.WEBHOOK_ALLOW_LOOPBACK,
  };
}

/**
 * Returns why the URL may not receive webhooks, or null when it may. Guards against SSRF:
 * every address the host resolves to must be public unless the operator allowed more.
 */
export async function callbackUrlProblem(
  rawUrl: string,
  policy: CallbackPolicy,
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'Must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Must be an http(s) URL';
  if (url.username || url.password) return 'Must not carry credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `Host ${host} could not be resolved`;
  }
  const classes = new Set(addresses.map(classifyAddress));
  // An address that is refused whatever the scheme is said first: "use https" would not help.
  const refused = new Set([...classes].filter((kind) => !isClassAllowed(kind, policy)));
  if (refused.has('loopback')) return 'Must not point at a loopback address';
  if (refused.has('private')) return 'Must not point at a private, link-local or reserved address';
  const isLocalhost = classes.size === 1 && classes.has('loopback');
  if (url.protocol === 'http:' && !(isLocalhost && policy.allowPlainHttpLocalhost)) {
    return 'Must use https (plain http is allowed only for localhost in development mode)';
  }
  return null;
}
