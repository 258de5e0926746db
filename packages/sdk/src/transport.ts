import { parseRetryAfter, VoxkeyError } from './errors.js';

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

export interface TransportOptions {
  fetch: FetchLike;
  retry: Required<RetryOptions>;
  /** Per-attempt timeout in ms until the response headers arrive; 0 disables it. */
  timeoutMs: number;
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

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** POSTs the server de-duplicates by `request_uuid`: repeating one cannot enrol or verify twice. */
const IDEMPOTENT_POST = /\/organisations\/[^/]+\/(enrollments|verifications)\/?$/;
const RETRYABLE_STATUS = new Set([502, 503, 504]);

/**
 * Whether repeating `method url` after a lost answer or a gateway error is safe.
 * GET/HEAD/OPTIONS are; so are the enrolment and verification POSTs (idempotent by
 * `request_uuid`). PATCH, DELETE and other POSTs are not retried: a DELETE whose answer was lost
 * would answer 404 the second time, and a repeated create could create twice.
 */
export function isIdempotent(method: string, url: string): boolean {
  const m = method.toUpperCase();
  if (SAFE_METHODS.has(m)) return true;
  if (m !== 'POST') return false;
  try {
    return IDEMPOTENT_POST.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/** Full-jitter exponential backoff: a random delay in [0, min(max, base * 2^attempt)). */
export function backoffDelay(attempt: number, retry: Pick<Required<RetryOptions>, 'baseDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * A fetch that adds a per-attempt timeout, retries with backoff and honours `Retry-After`.
 * Failures without a response become a VoxkeyError (`kind` 'timeout' or 'network'); an abort
 * through the request's own signal rethrows the signal's reason. Responses (including errors)
 * are returned for the caller to map.
 */
export function createTransport(options: TransportOptions): FetchLike {
  const random = options.random ?? Math.random;
  const { retry, timeoutMs } = options;
  return async function voxkeyFetch(request: Request): Promise<Response> {
    const callerSignal = request.signal;
    const idempotent = isIdempotent(request.method, request.url);
    for (let attempt = 0; ; attempt++) {
      callerSignal.throwIfAborted();
      const timeout = timeoutMs > 0 ? new AbortController() : undefined;
      const timer = timeout
        ? setTimeout(() => timeout.abort(new DOMException(`The request timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
        : undefined;
      const signal = timeout ? anySignal([callerSignal, timeout.signal]) : callerSignal;
      let response: Response;
      try {
        response = await options.fetch(new Request(request.clone(), { signal }));
      } catch (error) {
        if (callerSignal.aborted) throw callerSignal.reason ?? error;
        const timedOut = timeout?.signal.aborted === true;
        if (attempt < retry.retries && idempotent) {
          await sleep(backoffDelay(attempt, retry, random), callerSignal);
          continue;
        }
        throw new VoxkeyError({
          kind: timedOut ? 'timeout' : 'network',
          status: 0,
          code: 0,
          message: timedOut
            ? `${request.method} ${request.url} timed out after ${timeoutMs} ms${attempt ? ` (${attempt + 1} attempts)` : ''}`
            : `${request.method} ${request.url} failed: ${describe(error)}${attempt ? ` (${attempt + 1} attempts)` : ''}`,
          method: request.method,
          url: request.url,
          cause: error,
        });
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }

      const status = response.status;
      const retryable = status === 429 || (RETRYABLE_STATUS.has(status) && idempotent);
      if (!retryable || attempt >= retry.retries) return response;
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) return response;
      // Free the connection; not awaited: cancelling one branch of a tee'd body waits for the other.
      void response.body?.cancel().catch(() => {});
      await sleep(retryAfterMs ?? backoffDelay(attempt, retry, random), callerSignal);
    }
  };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message ? `${error.message} (${cause.message})` : error.message;
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
