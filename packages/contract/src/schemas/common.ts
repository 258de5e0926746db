import { z } from '../zod.js';

export const ErrorSchema = z
  .object({
    code: z.number().int().openapi({ description: 'Equal to the HTTP status.', example: 404 }),
    message: z.string().openapi({ example: 'Not found' }),
  })
  .openapi('Error');

export const FieldErrorSchema = z
  .object({
    field: z.string().openapi({ example: 'request_uuid' }),
    message: z.string().openapi({ example: 'This field is required' }),
  })
  .openapi('FieldError');

export const ValidationErrorSchema = z
  .object({
    code: z.number().int().openapi({ example: 400 }),
    message: z.string().openapi({ example: 'Request validation failed' }),
    errors: z.array(FieldErrorSchema),
  })
  .openapi('ValidationError');

export type ApiErrorBody = z.infer<typeof ErrorSchema> & { errors?: z.infer<typeof FieldErrorSchema>[] };

const errorResponse = (description: string, schema: typeof ErrorSchema | typeof ValidationErrorSchema = ErrorSchema) => ({
  description,
  content: { 'application/json': { schema } },
});

const rateLimitHeaders = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' as const } },
};

/** Error responses of the request body; any request may carry one, so every route can answer them. */
export const bodyErrorResponses = {
  413: errorResponse('The request body is larger than the server accepts.'),
  415: errorResponse('The request carries a body that is not `application/json`.'),
} as const;

/** Error responses every authenticated route can produce. */
export const commonErrorResponses = {
  400: errorResponse('The request failed validation; `errors` has one entry per faulty field.', ValidationErrorSchema),
  401: errorResponse('Token invalid, expired or disabled.'),
  403: errorResponse('The token may not act on this organisation.'),
  404: errorResponse('No such resource in this organisation.'),
  ...bodyErrorResponses,
  429: { ...errorResponse('Too many requests; retry after `Retry-After` seconds.'), headers: rateLimitHeaders },
  500: errorResponse('Internal error; the message never carries internals.'),
} as const;

export const conflictResponse = { 409: errorResponse('The request conflicts with the current state.') } as const;

/** Record ids are 32-bit: the largest id either database stores. */
export const MAX_ID = 2_147_483_647;
export const ID_PATTERN = /^[1-9][0-9]{0,9}$/;
export const isRecordId = (value: string) => ID_PATTERN.test(value) && Number(value) <= MAX_ID;

export const timestamp = (description?: string) =>
  z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00.000Z', ...(description ? { description } : {}) });

export const recordId = (description = 'Record identifier.') => z.number().int().positive().max(MAX_ID).openapi({ description, example: 1 });

export const pathId = (name: string, description: string) =>
  z
    .string()
    .regex(ID_PATTERN, `Must be a positive integer up to ${MAX_ID}`)
    .refine(isRecordId, `Must be a positive integer up to ${MAX_ID}`)
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
