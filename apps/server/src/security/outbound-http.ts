import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { type CallbackPolicy, classifyAddress, isAddressAllowed } from './callback-url.js';

export interface PostResult {
  statusCode: number | null;
  /** The full error, for the server log only: it can name local addresses and ports. */
  error: string | null;
  /** What the delivery log may show instead (see coarseDeliveryError). */
  reason?: string;
}

const REASON_BY_CODE: Record<string, string> = {
  ECONNREFUSED: 'connection_refused',
  ECONNRESET: 'connection_reset',
  EPIPE: 'connection_reset',
  ETIMEDOUT: 'timeout',
  ENOTFOUND: 'dns_failure',
  EAI_AGAIN: 'dns_failure',
  EFORBIDDEN: 'forbidden_address',
  EHOSTUNREACH: 'host_unreachable',
  ENETUNREACH: 'host_unreachable',
};

/**
 * A reason for the delivery log that tells a receiver's owner what went wrong without turning
 * webhooks into a port scanner: the precise reason only when the peer is a public address,
 * `unreachable` otherwise (the detail stays in the server log).
 */
export function coarseDeliveryError(
  err: NodeJS.ErrnoException & { address?: string },
  host: string,
): string {
  const code = err.code ?? '';
  const reason = /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)
    ? 'tls_error'
    : (REASON_BY_CODE[code] ?? 'network_error');
  if (reason === 'dns_failure' || reason === 'forbidden_address') return reason;
  const peer = err.address ?? host;
  return isIP(peer) && classifyAddress(peer) === 'public' ? reason : 'unreachable';
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
        return callback(
          Object.assign(new Error(`${hostname} resolves only to forbidden addresses`), {
            code: 'EFORBIDDEN',
          }),
          '',
          0,
        );
      }
      if ((options as { all?: boolean }).all) return (callback as any)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/**
 * Kept-alive connections to callback hosts, so a webhook does not pay a TCP (and TLS) handshake each
 * time. Every new connection resolves through guardedLookup, so a reused one only ever reaches an
 * address that passed the check when it connected: DNS rebinding needs a new connection, and that
 * is checked again. Idle connections close after IDLE_SOCKET_MS (or the receiver's keep-alive hint).
 */
const IDLE_SOCKET_MS = 4000;
const MIN_RETRY_MS = 100;
// One pool per set of addresses a policy allows: a connection made under one is never lent to another.
const agents = new Map<string, { http: http.Agent; https: https.Agent }>();

function agentFor(policy: CallbackPolicy, protocol: 'http:' | 'https:'): http.Agent {
  const key = `${policy.allowLoopback}/${policy.allowPrivate}`;
  let pair = agents.get(key);
  if (!pair) {
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: 16 };
    pair = { http: new http.Agent(options), https: new https.Agent(options) };
    agents.set(key, pair);
  }
  return protocol === 'https:' ? pair.https : pair.http;
}

/** POSTs exact bytes with a hard timeout; never throws, and never follows redirects. */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; policy: CallbackPolicy },
): Promise<PostResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { statusCode: null, error: 'invalid callback URL', reason: 'invalid_callback_url' };
  }
  const protocol = target.protocol;
  if (protocol !== 'https:' && protocol !== 'http:') {
    return {
      statusCode: null,
      error: 'callback URL must be http(s)',
      reason: 'invalid_callback_url',
    };
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const literal = /^[\d.]+$/.test(host) || host.includes(':');
  if (literal && !isAddressAllowed(host, options.policy)) {
    return {
      statusCode: null,
      error: `${host} is a forbidden address`,
      reason: 'forbidden_address',
    };
  }
  const deadline = Date.now() + options.timeoutMs;
  const pooled = agentFor(options.policy, protocol);
  const first = await postOnce(target, host, body, headers, options, pooled);
  // A kept-alive connection the receiver closed while it was idle: once more on a new connection,
  // within the same attempt's time.
  const left = deadline - Date.now();
  if (first.staleSocket && left >= MIN_RETRY_MS) {
    const retry = { ...options, timeoutMs: left };
    return (await postOnce(target, host, body, headers, retry, false)).result;
  }
  return first.result;
}

function postOnce(
  target: URL,
  host: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; policy: CallbackPolicy },
  agent: http.Agent | false,
): Promise<{ result: PostResult; staleSocket: boolean }> {
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const done = (result: PostResult, staleSocket = false) => resolve({ result, staleSocket });
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Voxkey-Webhooks/1',
        },
        lookup: guardedLookup(options.policy),
        agent,
        timeout: options.timeoutMs,
      },
      (response) => {
        response.resume();
        response.on('end', () => done({ statusCode: response.statusCode ?? null, error: null }));
        response.on('error', () => done({ statusCode: response.statusCode ?? null, error: null }));
      },
    );
    const timedOut = () =>
      request.destroy(
        Object.assign(new Error(`timed out after ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' }),
      );
    const timer = setTimeout(timedOut, options.timeoutMs);
    request.on('timeout', timedOut);
    request.on('error', (err: NodeJS.ErrnoException) =>
      done(
        { statusCode: null, error: err.message, reason: coarseDeliveryError(err, host) },
        request.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE'),
      ),
    );
    request.on('close', () => clearTimeout(timer));
    request.end(body);
  });
}
