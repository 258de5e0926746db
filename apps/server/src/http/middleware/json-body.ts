import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../../errors.js';
import type { AppEnv } from '../types.js';

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function hasBody(headers: Headers): boolean {
  const length = headers.get('content-length');
  return headers.has('transfer-encoding') || (length !== null && length !== '0');
}

/** A body must be JSON (415 otherwise); decided from the headers alone, before anything is read. */
export function requireJsonBodies(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const headers = c.req.raw.headers;
    if (hasBody(headers) && !JSON_CONTENT_TYPE.test(headers.get('content-type') ?? '')) {
      throw new ApiError('unsupported_media_type', 'Content-Type must be application/json');
    }
    await next();
  };
}

const tooLarge = (maxSize: number) =>
  new ApiError('payload_too_large', `Request body is larger than ${maxSize} bytes`);

/**
 * Reads the body once, enforcing the limit while it streams: a declared `Content-Length` over the
 * limit is refused before a byte is read, and a chunked body the moment it crosses the limit (the
 * rest is drained and discarded by the server, never kept). Runs after authentication, so only a
 * caller with a valid token and rate-limit room gets a body buffered at all.
 *
 * The bytes are decoded once and handed to hono's body cache, so later `c.req.json()`/`text()`
 * calls (NUL check, validators) do not read or copy the stream again.
 */
export function readBodyWithinLimit(maxSize: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // Asked before touching c.req.raw.body, which would build a full fetch Request for every GET.
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const raw = c.req.raw;
    if (!raw.body) return next();
    const declared = raw.headers.get('content-length');
    if (declared !== null && !raw.headers.has('transfer-encoding') && Number(declared) > maxSize)
      throw tooLarge(maxSize);

    const reader = raw.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      // Not cancelled: cancelling would destroy the socket before the 413 is written.
      if (size > maxSize) throw tooLarge(maxSize);
      chunks.push(value);
    }
    const text = Buffer.concat(chunks, size).toString('utf8');
    // hono keeps the promise of each body form in bodyCache (typed as the value).
    (c.req.bodyCache as Record<string, Promise<unknown>>).text = Promise.resolve(text);
    await next();
  };
}
