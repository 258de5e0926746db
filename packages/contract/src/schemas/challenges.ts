import { z } from '../zod.js';
import { languageTag, timestamp } from './common.js';
import { DEFAULT_LANGUAGE } from './voice.js';

/** Bounds and default of the organisation setting `challenge_ttl_seconds`. */
export const CHALLENGE_TTL_SECONDS = { default: 120, min: 30, max: 600 } as const;

export const CreateChallengeRequestSchema = z
  .strictObject({
    external_id: z.string().min(1).max(255).openapi({
      description:
        'The person who will read the phrase: only an enrolment or verification of this external_id can use the challenge.',
      example: 'customer-42',
    }),
    language: languageTag().default(DEFAULT_LANGUAGE).openapi({
      description:
        'Language of the phrase, in the format of predefined texts (default en-UK). Only languages the speech recogniser can check are accepted (English today); others are a 400 `unsupported_language` on `language`.',
    }),
  })
  .openapi('CreateChallengeRequest');

export const ChallengeSchema = z
  .object({
    challenge_id: z.string().openapi({
      format: 'uuid',
      description:
        "Send it as `challenge_id` with the enrolment or verification (or a stream's `start`) of the recording that says `text`.",
      example: '3f1e2d4c-5b6a-4798-8a1b-2c3d4e5f6a7b',
    }),
    text: z.string().openapi({
      description:
        'What to show the person and ask them to read aloud: six random digits spelled as words.',
      example: 'four seven one nine zero two',
    }),
    language: z.string().openapi({ example: 'en-UK' }),
    expires_at: timestamp(
      "After this the challenge is refused (`challenge_expired`); the lifetime is the organisation's `challenge_ttl_seconds` (default 120).",
    ),
  })
  .openapi('Challenge');
