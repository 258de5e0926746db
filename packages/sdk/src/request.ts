import type { Accepted } from './types.js';

/** Per-call options accepted as the last argument of every resource method. */
export interface RequestOptions {
  /** Aborts the call, including any backoff wait; the signal's reason is thrown. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout for this call. */
  timeoutMs?: number;
  /** Overrides the client's retry count for this call. */
  retries?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/** Accepted enrolment or verification: the server's answer plus the `request_uuid` that was sent. */
export interface AcceptedRequest extends Accepted {
  /** The `request_uuid` sent (generated when omitted); the webhook and `get()` use it. */
  request_uuid: string;
}
