import { Webhook } from 'standardwebhooks';
import type { VoxkeyEvent, VoxkeyEventType } from './types.js';

/** Headers as a `Headers` object (fetch, Hono, Deno, Bun) or a plain object (Node, Express). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The organisation's signing secret, `whsec_<base64>`. */
  secret: string;
  /** The request headers; `webhook-id`, `webhook-timestamp` and `webhook-signature` are read. */
  headers: WebhookHeaders;
  /** The raw request body exactly as received (not re-serialised JSON). */
  body: string | Uint8Array | ArrayBuffer;
  /** Accepted clock difference in seconds, both ways. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The current time, for tests. Default `new Date()`. */
  now?: Date;
}

export type WebhookVerificationReason =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_signature'
  | 'invalid_payload'
  | 'unknown_event';

/** Thrown by `verifyWebhook` when a call is not a genuine, fresh Voxkey event: answer it with 400. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** A record, so the compiler asks for each event type the contract adds. */
const KNOWN_EVENT_TYPES: Record<VoxkeyEventType, true> = {
  'verification.completed': true,
  'enrollment.completed': true,
  'webhook.test': true,
};
const EVENT_TYPES = new Set<string>(Object.keys(KNOWN_EVENT_TYPES));

/**
 * Verifies a Voxkey webhook call (Standard Webhooks signing) and returns its typed event.
 *
 * Checks that the three `webhook-*` headers are present, that `webhook-timestamp` is within
 * `toleranceSeconds` of now, and that one of the space-separated `v1,<base64>` signatures is the
 * HMAC-SHA256 of `id.timestamp.body` under `secret` (two signatures are sent while a rotated
 * secret is still valid; either matching is enough). Throws WebhookVerificationError otherwise.
 *
 * Pass the raw body: parsing and re-serialising JSON changes the bytes and breaks the signature.
 * Use the `webhook-id` header to de-duplicate: retries of one event carry the same id.
 */
export function verifyWebhook(options: VerifyWebhookOptions): VoxkeyEvent {
  const { secret } = options;
  if (typeof secret !== 'string' || secret === '')
    throw new TypeError('verifyWebhook: secret is required');
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const id = header(options.headers, 'webhook-id');
  const timestampHeader = header(options.headers, 'webhook-timestamp');
  const signatureHeader = header(options.headers, 'webhook-signature');
  if (!id || !timestampHeader || !signatureHeader) {
    throw new WebhookVerificationError(
      'missing_headers',
      'Missing webhook-id, webhook-timestamp or webhook-signature header',
    );
  }
  if (!/^\d{1,15}$/.test(timestampHeader.trim())) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      'webhook-timestamp is not a Unix time in seconds',
    );
  }
  const timestamp = Number(timestampHeader.trim());
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (now - timestamp > tolerance)
    throw new WebhookVerificationError('timestamp_too_old', 'Webhook timestamp is too old');
  if (timestamp - now > tolerance)
    throw new WebhookVerificationError(
      'timestamp_too_new',
      'Webhook timestamp is too far in the future',
    );

  const body = bodyText(options.body);
  let webhook: Webhook;
  try {
    webhook = new Webhook(secret);
  } catch (error) {
    throw new TypeError(
      `verifyWebhook: the secret is not a valid whsec_ secret (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const expected = webhook.sign(id, new Date(timestamp * 1000), body).split(',')[1] ?? '';
  const matched = signatureHeader
    .split(' ')
    .filter(Boolean)
    .some((candidate) => {
      const comma = candidate.indexOf(',');
      return (
        comma > 0 &&
        candidate.slice(0, comma) === 'v1' &&
        constantTimeEqual(candidate.slice(comma + 1), expected)
      );
    });
  if (!matched)
    throw new WebhookVerificationError('invalid_signature', 'No matching webhook signature');

  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The webhook body is not JSON');
  }
  if (
    typeof payload !== 'object' ||
    payload === null ||
    typeof (payload as { event_type?: unknown }).event_type !== 'string'
  ) {
    throw new WebhookVerificationError('invalid_payload', 'The webhook body has no event_type');
  }
  const type = (payload as { event_type: string }).event_type;
  if (!EVENT_TYPES.has(type)) {
    throw new WebhookVerificationError(
      'unknown_event',
      `Unknown webhook event type ${JSON.stringify(type)}: upgrade @voxkey/sdk`,
    );
  }
  return payload as VoxkeyEvent;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (
    typeof (headers as Headers).get === 'function' &&
    typeof (headers as Headers).has === 'function'
  ) {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === name) {
      const value = record[key];
      return Array.isArray(value) ? value.join(' ') : value;
    }
  }
  return undefined;
}

function bodyText(body: string | Uint8Array | ArrayBuffer): string {
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer || body instanceof Uint8Array)
    return new TextDecoder('utf-8').decode(body);
  throw new TypeError(
    'verifyWebhook: body must be the raw body as a string, Uint8Array/Buffer or ArrayBuffer',
  );
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
