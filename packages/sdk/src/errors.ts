import type { ErrorCode, FieldError } from './types.js';

/** What went wrong: the server answered with an error status, the attempt timed out, or no answer came. */
export type VoxkeyErrorKind = 'http' | 'timeout' | 'network';

export interface VoxkeyErrorInit {
  kind: VoxkeyErrorKind;
  status: number;
  code: number;
  error?: ErrorCode;
  message: string;
  errors?: FieldError[];
  requestId?: string;
  retryAfter?: number;
  body?: unknown;
  method?: string;
  url?: string;
  cause?: unknown;
}

const BRAND = Symbol.for('@voxkey/sdk.VoxkeyError');

/**
 * The one error type the SDK throws for a failed API call.
 *
 * - `kind: 'http'`: the server answered with a non-2xx status; `status`, `code`, `error`, `message`
 *   and (for 400) `errors[]` come from the error body `{ code, error, message, errors? }`.
 *   Branch on `error` (e.g. `already_enrolled` vs `enrollment_in_progress`), never on the message.
 * - `kind: 'timeout'`: no response within `timeoutMs` (after any retries); `status` and `code` are 0.
 * - `kind: 'network'`: the request never got an answer (DNS, refused connection, reset...); `status` and `code` are 0.
 *
 * An abort through the caller's own `AbortSignal` is not wrapped: the signal's reason
 * (an `AbortError` `DOMException` by default) is thrown as is, as `fetch` does.
 */
export class VoxkeyError extends Error {
  override readonly name = 'VoxkeyError';
  readonly kind: VoxkeyErrorKind;
  /** HTTP status, or 0 when no response was received. */
  readonly status: number;
  /** `code` from the error body (equal to the HTTP status), or 0 when no response was received. */
  readonly code: number;
  /**
   * The machine-readable reason from the error body (`already_enrolled`, `queue_full`, ...), or
   * undefined when no response was received or the body was not a Voxkey error (e.g. a proxy's 502).
   * `OperationErrorCode<'createEnrollment'>` names the values one operation can answer with.
   */
  readonly error: ErrorCode | undefined;
  /** Validation problems, one per faulty field (400 only), each with its `code`; empty otherwise. */
  readonly errors: FieldError[];
  /** The `X-Request-Id` response header, when the server sent one: quote it in support requests. */
  readonly requestId: string | undefined;
  /** For 429 (and 503): seconds the server asked to wait (`Retry-After`), when given. */
  readonly retryAfter: number | undefined;
  /** The parsed response body (or its text when it was not JSON). */
  readonly body: unknown;
  readonly method: string | undefined;
  readonly url: string | undefined;

  constructor(init: VoxkeyErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status;
    this.code = init.code;
    this.error = init.error;
    this.errors = init.errors ?? [];
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.body = init.body;
    this.method = init.method;
    this.url = init.url;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for a VoxkeyError, even one thrown by another copy of the SDK. */
  static is(value: unknown): value is VoxkeyError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[BRAND] === true
    );
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return VoxkeyError.is(value);
  }

  /** Builds the error for a non-2xx response whose body has already been read. */
  static fromResponse(
    response: Response,
    body: unknown,
    request?: { method?: string; url?: string },
  ): VoxkeyError {
    const parsed = isRecord(body) ? body : {};
    const status = response.status;
    const message =
      typeof parsed.message === 'string' && parsed.message
        ? parsed.message
        : typeof body === 'string' && body && body.length < 500
          ? body
          : `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}`;
    return new VoxkeyError({
      kind: 'http',
      status,
      code: typeof parsed.code === 'number' ? parsed.code : status,
      error: typeof parsed.error === 'string' ? (parsed.error as ErrorCode) : undefined,
      message,
      errors: Array.isArray(parsed.errors) ? parsed.errors.filter(isFieldError) : [],
      requestId: response.headers.get('x-request-id') ?? undefined,
      retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
      body,
      method: request?.method,
      url: request?.url ?? (response.url || undefined),
    });
  }
}

/** True for a VoxkeyError, even one thrown by another copy of the SDK. */
export function isVoxkeyError(value: unknown): value is VoxkeyError {
  return VoxkeyError.is(value);
}

/** Parses `Retry-After` (delta seconds or an HTTP date) into milliseconds from now. */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function retryAfterSeconds(value: string | null): number | undefined {
  const ms = parseRetryAfter(value);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFieldError(value: unknown): value is FieldError {
  return isRecord(value) && typeof value.field === 'string' && typeof value.message === 'string';
}
