import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { AppConfig } from '../config.js';
import { ApiError } from '../http/errors.js';

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
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
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
] as const) {
  privateOrReserved.addSubnet(net, prefix, 'ipv6');
}

export type AddressClass = 'public' | 'loopback' | 'private';

export function classifyAddress(address: string): AddressClass {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const mapped = family === 'ipv6' && /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return classifyAddress(mapped[1]!);
  if (loopback.check(address, family)) return 'loopback';
  if (privateOrReserved.check(address, family)) return 'private';
  return 'public';
}

export interface CallbackPolicy {
  allowLoopback: boolean;
  allowPrivate: boolean;
  allowPlainHttpLocalhost: boolean;
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
export async function callbackUrlProblem(rawUrl: string, policy: CallbackPolicy): Promise<string | null> {
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
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `Host ${host} could not be resolved`;
  }
  const classes = new Set(addresses.map(classifyAddress));
  const isLocalhost = classes.size === 1 && classes.has('loopback');
  if (url.protocol === 'http:' && !(isLocalhost && policy.allowPlainHttpLocalhost)) {
    return 'Must use https (plain http is allowed only for localhost in development mode)';
  }
  if (classes.has('loopback') && !policy.allowLoopback) return 'Must not point at a loopback address';
  if (classes.has('private') && !policy.allowPrivate) return 'Must not point at a private, link-local or reserved address';
  return null;
}

export async function assertCallbackUrlAllowed(rawUrl: string, config: AppConfig): Promise<void> {
  const problem = await callbackUrlProblem(rawUrl, callbackPolicy(config));
  if (problem) throw ApiError.field('settings.callback_url', problem);
}
