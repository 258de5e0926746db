import type { ErrorCode } from '@voxkey/contract';
import type { ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { isDatabaseUnavailable } from '../db/errors.js';
import { ApiError, INVALID_CREDENTIALS } from '../errors.js';

/** A database outage is usually a restart or failover: a client retrying after a second often succeeds. */
const DATABASE_RETRY_AFTER_S = 1;

/** The general code for a status hono (or a middleware library) raised on its own. */
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  403: 'forbidden',
  404: 'not_found',
  429: 'rate_limited',
  503: 'unavailable',
};

/** Maps hono's own HTTP exceptions (malformed JSON, body limit) into the API's error shape. */
function fromHttpException(err: HTTPException): ApiError {
  if (err.status === 400) {
    const malformed = /json/i.test(err.message) && /malformed/i.test(err.message);
    if (malformed) return ApiError.field('body', 'invalid_json', 'Malformed JSON in request body');
    if (/content-type/i.test(err.message)) {
      return new ApiError('unsupported_media_type', 'Content-Type must be application/json');
    }
    return ApiError.field('body', 'invalid_value', err.message || 'Bad request');
  }
  if (err.status === 413) return new ApiError('payload_too_large', 'Request body is too large');
  // zod-openapi's media-type gate: a route with a required JSON body got none, or another type.
  if (err.status === 415)
    return new ApiError('unsupported_media_type', 'Content-Type must be application/json');
  if (err.status === 401) return new ApiError('unauthorized', INVALID_CREDENTIALS);
  const known = CODE_BY_STATUS[err.status];
  if (known) return new ApiError(known, err.message || 'Request failed');
  return new ApiError('internal_error', 'Internal server error');
}

export interface ErrorReporter {
  (err: unknown, context: { method: string; path: string; reqId?: string }): void;
}

export function createErrorHandler(report: ErrorReporter): ErrorHandler {
  return (err, c) => {
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else if (err instanceof HTTPException) apiError = fromHttpException(err);
    else {
      report(err, {
        method: c.req.method,
        path: c.req.path,
        reqId: c.get('requestId') as string | undefined,
      });
      apiError = isDatabaseUnavailable(err)
        ? new ApiError('unavailable', 'The service cannot reach its database; retry shortly', {
            headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
          })
        : new ApiError('internal_error', 'Internal server error');
    }
    for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
    return c.json(apiError.toBody(), apiError.status);
  };
}
