import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../../errors.js';
import type { AppEnv } from '../types.js';

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function hasBody(headers: Headers): boolean {
  const length = headers.get('content-length');
  return headers.has('transfer-encoding') || (length !== null && length !== '0');
}

/** A body must be JSON (415 otherwise), and no larger than the configured limit (413). */
export function requireJsonBodies(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const headers = c.req.raw.headers;
    if (hasBody(headers) && !JSON_CONTENT_TYPE.test(headers.get('content-type') ?? '')) {
      throw new ApiError('unsupported_media_type', 'Content-Type must be application/json');
    }
    await next();
  };
}

export function limitBodySize(maxSize: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError('payload_too_large', `Request body is larger than ${maxSize} bytes`);
    },
  });
}
