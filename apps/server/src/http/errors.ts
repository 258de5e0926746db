import type { ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export interface FieldError {
  field: string;
  message: string;
}

const STATUS_BY_CODE = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ApiErrorCode = keyof typeof STATUS_BY_CODE;

export const INVALID_CREDENTIALS = 'Invalid or expired authentication credentials';

/** The one error the API throws; onError turns it into `{code, message[, errors]}`. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly errors?: FieldError[],
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS_BY_CODE[code];
    this.headers = headers;
  }

  static validation(errors: FieldError[], message = 'Request validation failed'): ApiError {
    return new ApiError('bad_request', message, errors);
  }

  static field(field: string, message: string): ApiError {
    return ApiError.validation([{ field, message }]);
  }

  static notFound(what: string): ApiError {
    return new ApiError('not_found', `${what} not found`);
  }

  toBody() {
    return { code: this.status, message: this.message, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

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
