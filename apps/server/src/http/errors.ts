import type { ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ApiError, type ApiErrorCode, INVALID_CREDENTIALS, STATUS_BY_CODE } from '../errors.js';

/** Maps hono's own HTTP exceptions (malformed JSON, body limit) into the API's error shape. */
function fromHttpException(err: HTTPException): ApiError {
  if (err.status === 400) {
    const malformed = /json/i.test(err.message) && /malformed/i.test(err.message);
    if (malformed) return ApiError.field('body', 'Malformed JSON in request body');
    if (/content-type/i.test(err.message)) {
      return new ApiError('unsupported_media_type', 'Content-Type must be application/json');
    }
    return ApiError.field('body', err.message || 'Bad request');
  }
  if (err.status === 413) return new ApiError('payload_too_large', 'Request body is too large');
  if (err.status === 401) return new ApiError('unauthorized', INVALID_CREDENTIALS);
  const known = Object.entries(STATUS_BY_CODE).find(([, status]) => status === err.status);
  if (known) return new ApiError(known[0] as ApiErrorCode, err.message || 'Request failed');
  return new ApiError('internal', 'Internal server error');
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
      report(err, { method: c.req.method, path: c.req.path, reqId: c.get('requestId') as string | undefined });
      apiError = new ApiError('internal', 'Internal server error');
    }
    for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
    return c.json(apiError.toBody(), apiError.status);
  };
}
