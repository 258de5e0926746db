import { parseRetryAfter, VoxkeyError } from './errors.js';
import { retryPolicy } from './retry-policy.js';
import { newRequestUuid } from './voice.js';

export type FetchLike = (input: Request) => Promise<Response>;

export interface RetryOptions {
  /** Retries after the first attempt. Default 2 (so at most 3 attempts). 0 disables retries. */
  retries?: number;
  /** Base of the exponential backoff in ms. Default 250. */
  baseDelayMs?: number;
  /** Upper bound of one backoff delay in ms. Default 8000. */
  maxDelayMs?: number;
  /**
   * Longest `Retry-After` the SDK waits for in ms; a longer one ends retrying and the 429/503
   * surfaces as a VoxkeyError with `retryAfter`. Default 60000.
   */
  maxRetryAfterMs?: number;
}

/**
 * Receives one debug line per attempt and per retry. The lines name the method, URL, status,
 * attempt and timing; never the token, other headers or the body (`voice_data` stays out).
 * `console` fits.
 */
export interface VoxkeyLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
}

export interface TransportOptions {
  fetch: FetchLike;
  retry: Required<RetryOptions>;
  /** Per-attempt timeout in ms until the response headers arrive; 0 disables it. */
  timeoutMs: number;
  logger?: VoxkeyLogger | undefined;
  /** Random number in [0, 1) for the jitter; injectable for tests. */
  random?: () => number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  retries: 2,
  baseDelayMs: 250,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
};
export const DEFAULT_TIMEOUT_MS = 30_000;

const RETRYABLE_STATUS = new Set([502, 503, 504]);

/** Full-jitter exponential backoff: a random delay in [0, min(max, base * 2^attempt)). */
export function backoffDelay(
  attempt: number,
  retry: Pick<Required<RetryOptions>, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * A fetch that adds a per-attempt timeout, retries with backoff and honours `Retry-After`.
 * Which requests are repeated after a lost answer or a 502/503/504 comes from the contract
 * (`retryPolicy`); a 429 is retried whatever the method, as the server did no work. Requests
 * whose policy is `idempotency-key` get an `Idempotency-Key` header (unless the caller set one),
 * the same on every attempt. Failures without a response become a VoxkeyError (`kind` 'timeout'
 * or 'network'); an abort through the request's own signal rethrows the signal's reason.
 * Responses (including errors) are returned for the caller to map.
 */
export function createTransport(options: TransportOptions): FetchLike {
  const random = options.random ?? Math.random;
  const { retry, timeoutMs } = options;
  const log = (message: string, fields: Record<string, unknown>) => {
    try {
      options.logger?.debug(`voxkey: ${message}`, fields);
    } catch {
      // A failing logger must not fail the request.
    }
  };
  return async function voxkeyFetch(original: Request): Promise<Response> {
    const policy = retryPolicy(original.method, original.url);
    const request = policy === 'idempotency-key' ? withIdempotencyKey(original) : original;
    const callerSignal = request.signal;
    const label = `${request.method} ${request.url}`;
    const attempts = retry.retries + 1;
    for (let attempt = 0; ; attempt++) {
      callerSignal.throwIfAborted();
      const timeout = timeoutMs > 0 ? new AbortController() : undefined;
      const timer = timeout
        ? setTimeout(
            () =>
              timeout.abort(
                new DOMException(`The request timed out after ${timeoutMs} ms`, 'TimeoutError'),
              ),
            timeoutMs,
          )
        : undefined;
      const signal = timeout ? anySignal([callerSignal, timeout.signal]) : callerSignal;
      const fields = { method: request.method, url: request.url, attempt: attempt + 1, attempts };
      const started = Date.now();
      let response: Response;
      try {
        response = await options.fetch(new Request(request.clone(), { signal }));
      } catch (error) {
        if (callerSignal.aborted) {
          log(`${label} aborted by the caller (attempt ${attempt + 1}/${attempts})`, {
            ...fields,
            durationMs: Date.now() - started,
          });
          throw callerSignal.reason ?? error;
        }
        const timedOut = timeout?.signal.aborted === true;
        const reason = timedOut ? `timed out after ${timeoutMs} ms` : `failed: ${describe(error)}`;
        log(`${label} ${reason} (attempt ${attempt + 1}/${attempts})`, {
          ...fields,
          durationMs: Date.now() - started,
          error: reason,
        });
        if (attempt < retry.retries && policy !== 'never') {
          const delayMs = backoffDelay(attempt, retry, random);
          log(`retrying ${label} in ${delayMs} ms (attempt ${attempt + 2}/${attempts})`, {
            ...fields,
            attempt: attempt + 2,
            delayMs,
          });
          await sleep(delayMs, callerSignal);
          continue;
        }
        throw new VoxkeyError({
          kind: timedOut ? 'timeout' : 'network',
          status: 0,
          code: 0,
          message: `${label} ${reason}${attempt ? ` (${attempt + 1} attempts)` : ''}`,
          method: request.method,
          url: request.url,
          cause: error,
        });
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }

      const status = response.status;
      log(
        `${label} -> ${status} in ${Date.now() - started} ms (attempt ${attempt + 1}/${attempts})`,
        { ...fields, status, durationMs: Date.now() - started },
      );
      // A keyed POST's 409 with Retry-After is `idempotency_key_in_progress`: our earlier attempt is still running, and a repeat gets its response.
      const inProgress =
        status === 409 && policy === 'idempotency-key' && response.headers.has('retry-after');
      const retryable =
        status === 429 || inProgress || (RETRYABLE_STATUS.has(status) && policy !== 'never');
      if (!retryable || attempt >= retry.retries) return response;
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) return response;
      // Free the connection; not awaited: cancelling one branch of a tee'd body waits for the other.
      void response.body?.cancel().catch(() => {});
      const delayMs = retryAfterMs ?? backoffDelay(attempt, retry, random);
      log(
        `retrying ${label} in ${delayMs} ms after ${status} (attempt ${attempt + 2}/${attempts})`,
        { ...fields, attempt: attempt + 2, status, delayMs },
      );
      await sleep(delayMs, callerSignal);
    }
  };
}

/** The request with an `Idempotency-Key` (a random UUID) unless it already has one. */
function withIdempotencyKey(request: Request): Request {
  if (request.headers.has('idempotency-key')) return request;
  const headers = new Headers(request.headers);
  headers.set('Idempotency-Key', newRequestUuid());
  return new Request(request, { headers });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message
      ? `${error.message} (${cause.message})`
      : error.message;
  }
  return String(error);
}

/** `AbortSignal.any` (Node 20.3+, current browsers, Deno, Bun) with a fallback. */
export function anySignal(signals: AbortSignal[]): AbortSignal {
  const any = (AbortSignal as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (typeof any === 'function') return any.call(AbortSignal, signals);
  const controller = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      controller.abort(s.reason);
      return controller.signal;
    }
  }
  const onAbort = (event: Event) => {
    controller.abort((event.target as AbortSignal).reason);
    for (const s of signals) s.removeEventListener('abort', onAbort);
  };
  for (const s of signals) s.addEventListener('abort', onAbort);
  return controller.signal;
}

/** Waits `ms`, rejecting with the signal's reason if it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
