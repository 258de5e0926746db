import { ERROR_CODES, type ErrorCode, type FieldErrorCode } from '@voxkey/contract';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export type { ErrorCode, FieldErrorCode };

/** One validation problem: which field, a stable code, and a message for people. */
export interface FieldError {
  field: string;
  code: FieldErrorCode;
  message: string;
}

export const INVALID_CREDENTIALS = 'Invalid or expired authentication credentials';

export interface ApiErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
}

/**
 * The one error the API throws; the HTTP layer turns it into `{code, error, message[, errors]}`.
 * `error` is the contract's code; the HTTP status comes with it.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;

  constructor(
    readonly error: ErrorCode,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.status = ERROR_CODES[error].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  static validation(errors: FieldError[], message = 'Request validation failed'): ApiError {
    return new ApiError('validation_failed', message, { errors });
  }

  static field(field: string, code: FieldErrorCode, message: string): ApiError {
    return ApiError.validation([{ field, code, message }]);
  }

  static notFound(what: string): ApiError {
    return new ApiError('not_found', `${what} not found`);
  }

  toBody() {
    return { code: this.status, error: this.error, message: this.message, ...(this.errors ? { errors: this.errors } : {}) };
  }
}
