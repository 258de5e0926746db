import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { type CallbackPolicy, isAddressAllowed } from './callback-url.js';

export interface PostResult {
  statusCode: number | null;
  error: string | null;
}

/**
 * A DNS lookup that refuses addresses the policy forbids. Checking at connect time, not only
 * when the URL is saved, stops DNS rebinding from turning a webhook into an SSRF probe.
 */
function guardedLookup(policy: CallbackPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const allowed = list.filter((a) => isAddressAllowed(a.address, policy));
      if (allowed.length === 0) {
        return callback(Object.assign(new Error(`${hostname} resolves only to forbidden addresses`), { code: 'EFORBIDDEN' }), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as any)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** POSTs exact bytes with a hard timeout; never throws, and never follows redirects. */
export function postJson(url: string, body: string, headers: Record<string, string>, options: { timeoutMs: number; policy: CallbackPolicy }): Promise<PostResult> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ statusCode: null, error: 'invalid callback URL' });
      return;
    }
    const client = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : null;
    if (!client) {
      resolve({ statusCode: null, error: 'callback URL must be http(s)' });
      return;
    }
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const literal = /^[\d.]+$/.test(host) || host.includes(':');
    if (literal && !isAddressAllowed(host, options.policy)) {
      resolve({ statusCode: null, error: `${host} is a forbidden address` });
      return;
    }
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Voxkey-Webhooks/1' },
        lookup: guardedLookup(options.policy),
        // A fresh connection per attempt: a pooled socket would skip the address check.
        agent: false,
        timeout: options.timeoutMs,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ statusCode: response.statusCode ?? null, error: null }));
        response.on('error', () => resolve({ statusCode: response.statusCode ?? null, error: null }));
      },
    );
    const timer = setTimeout(() => request.destroy(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('timeout', () => request.destroy(new Error(`timed out after ${options.timeoutMs} ms`)));
    request.on('error', (err) => resolve({ statusCode: null, error: err.message }));
    request.on('close', () => clearTimeout(timer));
    request.end(body);
  });
}
