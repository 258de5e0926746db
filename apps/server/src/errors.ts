import type { ContentfulStatusCode } from 'hono/utils/http-status';

export interface FieldError {
  field: string;
  message: string;
}

export const STATUS_BY_CODE = {
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
