import type { FieldTypes } from '../list-query.js';
import { z } from '../zod.js';
import { languageTag, recordId, timestamp } from './common.js';

export const MAX_TEXT_LENGTH = 5000;

export const PredefinedTextSchema = z
  .object({
    id: recordId(),
    org_id: recordId('Organisation identifier.'),
    language: z.string().openapi({ example: 'en-UK' }),
    text_code: z.number().int(),
    text: z.string().openapi({ example: 'My voice is my password.' }),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('PredefinedText');

const textCode = () =>
  z
    .number()
    .int()
    .min(0)
    .max(2147483647)
    .openapi({ description: 'Caller-defined category.', example: 1 });
const promptText = () =>
  z
    .string()
    .trim()
    .min(1)
    .max(MAX_TEXT_LENGTH)
    .openapi({
      description: `Prompt; under 200 characters recommended, at most ${MAX_TEXT_LENGTH}.`,
    });

export const CreatePredefinedTextBodySchema = z
  .strictObject({
    org_id: z
      .number()
      .int()
      .positive()
      .openapi({ description: 'Must equal the organisation in the path.' }),
    language: languageTag(),
    text_code: textCode(),
    text: promptText(),
  })
  .openapi('CreatePredefinedTextRequest');

export const UpdatePredefinedTextBodySchema = z
  .strictObject({
    org_id: z
      .number()
      .int()
      .positive()
      .optional()
      .openapi({ description: 'When given, must equal the organisation in the path.' }),
    language: languageTag().optional(),
    text_code: textCode().optional(),
    text: promptText().optional(),
  })
  .openapi('UpdatePredefinedTextRequest');

export const TEXT_FILTER_FIELDS = {
  id: 'integer',
  language: 'string',
  text_code: 'integer',
  created_at: 'timestamp',
} as const satisfies FieldTypes;
export const TEXT_SORT_FIELDS = ['id', 'language', 'text_code', 'created_at'] as const;
