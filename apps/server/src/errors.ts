import {
  type ErrorCode,
  type FieldErrorCode,
  SERVER_ERROR_CODES,
  type ServerErrorCode,
} from '@voxkey/contract';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export type { ErrorCode, FieldErrorCode, ServerErrorCode };

/** One validation problem: which field, a stable code, and a message for people. */
export interface FieldError {
  field: string;
  code: FieldErrorCode;
  message: string;
}

/** A 400 lists at most this many field errors, then one entry saying how many more there are. */
export const MAX_FIELD_ERRORS = 20;

function capFieldErrors(errors: FieldError[]): FieldError[] {
  if (errors.length <= MAX_FIELD_ERRORS) return errors;
  const more = errors.length - MAX_FIELD_ERRORS;
  return [
    ...errors.slice(0, MAX_FIELD_ERRORS),
    {
      field: '',
      code: 'too_many_errors',
      message: `${more} more ${more === 1 ? 'error' : 'errors'} not listed; fix these and send the request again`,
    },
  ];
}

export const INVALID_CREDENTIALS = 'Invalid or expired authentication credentials';

export interface ApiErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
}

/**
 * The one error the API throws, on REST routes and verification streams alike; the HTTP layer turns
 * it into `{code, error, message[, errors]}`, a stream into the same body plus `type`. `error` is
 * the contract's code; the HTTP status comes with it.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;

  constructor(
    readonly error: ServerErrorCode,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.status = SERVER_ERROR_CODES[error].status;
    this.errors = options.errors && capFieldErrors(options.errors);
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
    return {
      code: this.status,
      error: this.error,
      message: this.message,
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}
