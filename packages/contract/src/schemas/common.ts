import { z } from '../zod.js';
import {
  ERROR_CODES,
  type ErrorCode,
  errorCodeNames,
  FIELD_ERROR_CODES,
  fieldErrorCodeNames,
} from './error-codes.js';

/** A Markdown list of codes and their meanings, for a schema's description. */
export const codeTable = (rows: Array<[string, string]>) =>
  rows.map(([code, meaning]) => `- \`${code}\`: ${meaning}`).join('\n');

export const ErrorCodeSchema = z.enum(errorCodeNames).openapi('ErrorCode', {
  description: `Machine-readable reason of an error response; each response lists the values it can carry.\n\n${codeTable(
    errorCodeNames.map((code) => [
      code,
      `(${ERROR_CODES[code].status}) ${ERROR_CODES[code].meaning}`,
    ]),
  )}`,
});

export const FieldErrorCodeSchema = z.enum(fieldErrorCodeNames).openapi('FieldErrorCode', {
  description: `Machine-readable reason of one validation problem.\n\n${codeTable(fieldErrorCodeNames.map((code) => [code, FIELD_ERROR_CODES[code]]))}`,
});

export const ErrorSchema = z
  .object({
    code: z.number().int().openapi({ description: 'Equal to the HTTP status.', example: 404 }),
    error: ErrorCodeSchema,
    message: z.string().openapi({ example: 'Not found' }),
  })
  .openapi('Error');

export const FieldErrorSchema = z
  .object({
    field: z.string().openapi({ example: 'request_uuid' }),
    code: FieldErrorCodeSchema,
    message: z.string().openapi({ example: 'This field is required' }),
  })
  .openapi('FieldError');

export const ValidationErrorSchema = z
  .object({
    code: z.number().int().openapi({ example: 400 }),
    error: z.literal('validation_failed'),
    message: z.string().openapi({ example: 'Request validation failed' }),
    errors: z.array(FieldErrorSchema),
  })
  .openapi('ValidationError');

export type ApiErrorBody = z.infer<typeof ErrorSchema> & {
  errors?: z.infer<typeof FieldErrorSchema>[];
};

/**
 * An error body whose `error` is one of `codes`: a named schema, so the document and generated
 * clients say exactly which codes each response can carry.
 */
const errorBody = (name: string, codes: readonly [ErrorCode, ...ErrorCode[]]) =>
  ErrorSchema.extend({ error: z.enum(codes) }).openapi(name);

const errorResponse = (description: string, schema: ReturnType<typeof errorBody>) => ({
  description,
  content: { 'application/json': { schema } },
});

const UnauthorizedErrorSchema = errorBody('UnauthorizedError', ['unauthorized']);
const ForbiddenErrorSchema = errorBody('ForbiddenError', ['forbidden']);
const NotFoundErrorSchema = errorBody('NotFoundError', ['not_found']);
const PayloadTooLargeErrorSchema = errorBody('PayloadTooLargeError', ['payload_too_large']);
const UnsupportedMediaTypeErrorSchema = errorBody('UnsupportedMediaTypeError', [
  'unsupported_media_type',
]);
const RateLimitedErrorSchema = errorBody('RateLimitedError', ['rate_limited']);
const InternalErrorSchema = errorBody('InternalError', ['internal_error']);
const AlreadyExistsErrorSchema = errorBody('AlreadyExistsError', ['already_exists']);
const VoiceRequestRateLimitedErrorSchema = errorBody('VoiceRequestRateLimitedError', [
  'rate_limited',
  'queue_full',
  'quota_exceeded',
]);
const UnavailableErrorSchema = errorBody('UnavailableError', ['unavailable']);
const PHRASE_CONFLICT_CODES = [
  'challenge_expired',
  'challenge_used',
  'challenge_user_mismatch',
] as const;
const PHRASE_NOT_FOUND_CODES = ['challenge_not_found', 'text_not_found'] as const;
const EnrollmentConflictErrorSchema = errorBody('EnrollmentConflictError', [
  'no_callback_url',
  'already_enrolled',
  'enrollment_in_progress',
  'voiceprint_full',
  'request_uuid_reused',
  ...PHRASE_CONFLICT_CODES,
]);
const EnrollmentNotFoundErrorSchema = errorBody('EnrollmentNotFoundError', [
  'not_found',
  'user_not_enrolled',
  ...PHRASE_NOT_FOUND_CODES,
]);
const VerificationConflictErrorSchema = errorBody('VerificationConflictError', [
  'no_callback_url',
  'request_uuid_reused',
  ...PHRASE_CONFLICT_CODES,
]);
const VerificationForbiddenErrorSchema = errorBody('VerificationForbiddenError', [
  'forbidden',
  'user_inactive',
]);
const VerificationNotFoundErrorSchema = errorBody('VerificationNotFoundError', [
  'not_found',
  'user_not_enrolled',
  ...PHRASE_NOT_FOUND_CODES,
]);

const rateLimitHeaders = {
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer' as const },
  },
};

/** Error responses of the request body; any request may carry one, so every route can answer them. */
export const bodyErrorResponses = {
  413: errorResponse(
    'The request body is larger than the server accepts.',
    PayloadTooLargeErrorSchema,
  ),
  415: errorResponse(
    'The request carries a body that is not `application/json`.',
    UnsupportedMediaTypeErrorSchema,
  ),
} as const;

const DATABASE_UNREACHABLE = 'the server cannot reach its database right now';

/** Error responses every authenticated route can produce. */
export const commonErrorResponses = {
  400: {
    description: 'The request failed validation; `errors` has one entry per faulty field.',
    content: { 'application/json': { schema: ValidationErrorSchema } },
  },
  401: errorResponse('Token invalid, expired or disabled.', UnauthorizedErrorSchema),
  403: errorResponse('The token may not act on this organisation.', ForbiddenErrorSchema),
  404: errorResponse('No such resource in this organisation.', NotFoundErrorSchema),
  ...bodyErrorResponses,
  429: {
    ...errorResponse(
      'Too many requests; retry after `Retry-After` seconds.',
      RateLimitedErrorSchema,
    ),
    headers: rateLimitHeaders,
  },
  500: errorResponse('Internal error; the message never carries internals.', InternalErrorSchema),
  503: {
    ...errorResponse(
      'The server cannot reach its database right now; retry after `Retry-After` seconds.',
      UnavailableErrorSchema,
    ),
    headers: rateLimitHeaders,
  },
} as const;

/** 409 of the predefined-text writes. */
export const conflictResponse = {
  409: errorResponse(
    'The (language, text_code) pair already exists in the organisation.',
    AlreadyExistsErrorSchema,
  ),
} as const;

/** An `Idempotency-Key`: 1 to 255 printable ASCII characters (a UUID is a good choice). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The optional header of the POSTs without a natural key (`x-voxkey-retry: idempotency-key`). */
export const IdempotencyKeyHeaders = z.object({
  'idempotency-key': z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN, 'Must be 1 to 255 printable ASCII characters')
    .optional()
    .openapi({
      description:
        'Makes the request safe to repeat: within 24 hours, the same key with the same request replays the first successful response (with `Idempotent-Replayed: true`) instead of acting again; with another request it is a 409 `idempotency_key_reused`. Keys are scoped to the organisation.',
      example: '5f0c6f0e-8a4b-4f43-9a43-0c8e4a4f3b1d',
    }),
});

const replayedHeaders = {
  'Idempotent-Replayed': {
    description:
      '`true` when this is the stored response of an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string' as const, enum: ['true'] },
  },
};

/** A success response of an `Idempotency-Key` operation: it may be a replay. */
export const idempotentResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  ...jsonResponse(schema, description),
  headers: replayedHeaders,
});

const retryAfterOnConflict = {
  'Retry-After': {
    description: 'With `idempotency_key_in_progress`: seconds to wait before repeating.',
    schema: { type: 'integer' as const },
  },
};
const IDEMPOTENCY_CODES = ['idempotency_key_reused', 'idempotency_key_in_progress'] as const;
const IdempotencyConflictErrorSchema = errorBody('IdempotencyConflictError', IDEMPOTENCY_CODES);
const CreateTextConflictErrorSchema = errorBody('CreatePredefinedTextConflictError', [
  'already_exists',
  ...IDEMPOTENCY_CODES,
]);
const WebhookTestConflictErrorSchema = errorBody('WebhookTestConflictError', [
  'no_callback_url',
  ...IDEMPOTENCY_CODES,
]);
const idempotencyConflict =
  'The `Idempotency-Key` was used with another request, or its first request is still being processed.';

/** 409 of an `Idempotency-Key` operation that has no other conflict. */
export const idempotencyConflictResponse = {
  409: {
    ...errorResponse(idempotencyConflict, IdempotencyConflictErrorSchema),
    headers: retryAfterOnConflict,
  },
} as const;

/** 409 of createPredefinedText. */
export const createTextConflictResponse = {
  409: {
    ...errorResponse(
      `The (language, text_code) pair already exists in the organisation, or: ${idempotencyConflict}`,
      CreateTextConflictErrorSchema,
    ),
    headers: retryAfterOnConflict,
  },
} as const;

/** 409 of sendWebhookTest. */
export const webhookTestConflictResponse = {
  409: {
    ...errorResponse(
      `No callback URL is configured, or: ${idempotencyConflict}`,
      WebhookTestConflictErrorSchema,
    ),
    headers: retryAfterOnConflict,
  },
} as const;

/** 503 of a route that needs the models (enrolments, verifications, creating a challenge). */
export const unavailableResponse = {
  503: {
    ...errorResponse(
      `Voice processing is unavailable on this server (for example, no model is installed), or ${DATABASE_UNREACHABLE} (then with \`Retry-After\`).`,
      UnavailableErrorSchema,
    ),
    headers: rateLimitHeaders,
  },
} as const;

const voiceRequestErrorResponses = {
  429: {
    ...errorResponse(
      'Too many requests, the processing queue is full, or a trial token used up its monthly quota; retry after `Retry-After` seconds.',
      VoiceRequestRateLimitedErrorSchema,
    ),
    headers: rateLimitHeaders,
  },
  ...unavailableResponse,
} as const;

/** Errors of createEnrollment beyond the common ones. */
export const enrollmentErrorResponses = {
  ...voiceRequestErrorResponses,
  404: errorResponse(
    'No such resource, (mode `add`) no voiceprint for this external_id, or no such challenge_id or text_id in this organisation.',
    EnrollmentNotFoundErrorSchema,
  ),
  409: errorResponse(
    'No callback URL is configured, the external_id is enrolled (mode `new`) or being enrolled, its voiceprint holds the maximum of recordings (mode `add`), request_uuid was used for another request, or the challenge expired, was used, or belongs to another external_id.',
    EnrollmentConflictErrorSchema,
  ),
} as const;

/** Errors of createAudioCheck beyond the common ones. */
export const audioCheckErrorResponses = {
  503: {
    ...errorResponse(
      `No engine on this server, the check could not finish in time, or ${DATABASE_UNREACHABLE}; retry after \`Retry-After\` seconds.`,
      UnavailableErrorSchema,
    ),
    headers: rateLimitHeaders,
  },
} as const;

/** Errors of createVerification beyond the common ones. */
export const verificationErrorResponses = {
  ...voiceRequestErrorResponses,
  403: errorResponse(
    'The token may not act on this organisation, or the user is deactivated.',
    VerificationForbiddenErrorSchema,
  ),
  404: errorResponse(
    'No such resource, no enrolled user with this external_id, or no such challenge_id or text_id in this organisation.',
    VerificationNotFoundErrorSchema,
  ),
  409: errorResponse(
    'No callback URL is configured, request_uuid was used for another request, or the challenge expired, was used, or belongs to another external_id.',
    VerificationConflictErrorSchema,
  ),
} as const;

/** Record ids are 32-bit: the largest id either database stores. */
export const MAX_ID = 2_147_483_647;
export const ID_PATTERN = /^[1-9][0-9]{0,9}$/;
export const isRecordId = (value: string) => ID_PATTERN.test(value) && Number(value) <= MAX_ID;

export const timestamp = (description?: string) =>
  z.string().openapi({
    format: 'date-time',
    example: '2026-01-31T12:00:00.000Z',
    ...(description ? { description } : {}),
  });

export const recordId = (description = 'Record identifier.') =>
  z.number().int().positive().max(MAX_ID).openapi({ description, example: 1 });

export const pathId = (name: string, description: string) =>
  z
    .string()
    .regex(ID_PATTERN, `Must be a positive integer up to ${MAX_ID}`)
    .refine(isRecordId, {
      message: `Must be a positive integer up to ${MAX_ID}`,
      params: { code: 'out_of_range' },
    })
    .openapi({ param: { name, in: 'path', required: true }, description, example: '1' });

export const OrgPathParams = z.object({ org_id: pathId('org_id', 'Organisation identifier.') });

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true as const,
  ...(description ? { description } : {}),
  content: { 'application/json': { schema } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

export const LANGUAGE_PATTERN = /^[a-z]{2}-[A-Z]{2}$/;
export const languageTag = () =>
  z
    .string()
    .regex(LANGUAGE_PATTERN, 'Must be [ISO 639-1]-[ISO 3166-1 alpha-2], for example en-UK')
    .openapi({ example: 'en-UK' });
