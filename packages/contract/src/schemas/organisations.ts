import { z } from '../zod.js';
import { CHALLENGE_TTL_SECONDS } from './challenges.js';
import { recordId, timestamp } from './common.js';

export const E164_PATTERN = /^\+[1-9][0-9]{1,14}$/;

export const OrganisationSchema = z
  .object({
    id: recordId(),
    name: z.string().openapi({ example: 'Acme Ltd' }),
    address: z
      .string()
      .nullable()
      .openapi({ example: '1 High Street, London SW1A 1AA, United Kingdom' }),
    email: z.string().openapi({ example: 'billing@acme.example' }),
    phone_number: z.string().nullable().openapi({ example: '+442071234567' }),
    vat: z.string().nullable().openapi({ example: 'GB123456789' }),
    vies: z.string().nullable().openapi({ example: 'GB123456789' }),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('Organisation');

const unitInterval = () =>
  z
    .number({ message: 'Must be a number from 0 to 1' })
    .min(0, 'Must be a number from 0 to 1')
    .max(1, 'Must be a number from 0 to 1');

const optionalText = (max: number) => z.string().trim().max(max).nullable().optional();

export const UpdateOrganisationBodySchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    address: optionalText(500),
    email: z.email({ message: 'Must be an email address' }).max(254).optional(),
    phone_number: z
      .string()
      .regex(E164_PATTERN, 'Must be an E.164 number, for example +442071234567')
      .nullable()
      .optional(),
    vat: optionalText(32),
    vies: optionalText(32),
  })
  .openapi('UpdateOrganisationRequest');

export const SettingsValuesSchema = z
  .object({
    alert_on_failure: z.boolean().openapi({
      description: 'Email the organisation when the verification failure rate is abnormal.',
    }),
    callback_url: z.string().nullable().openapi({
      description: 'Where enrolment and verification results are delivered as signed webhooks.',
      example: 'https://app.example/voxkey/webhooks',
    }),
    match_threshold: z.number().min(0).max(1).nullable().openapi({
      description:
        "A verification is `verified` when match_score >= match_threshold; null uses the server's default (MATCH_THRESHOLD).",
    }),
    deepfake_threshold: z.number().min(0).max(1).nullable().openapi({
      description:
        "Verifications: deepfake_detected is true when deepfake_score >= deepfake_threshold; null uses the spoof model's default.",
    }),
    enrollment_deepfake_threshold: z.number().min(0).max(1).nullable().openapi({
      description:
        "Enrolments: with reject_deepfake_enrollments, an enrolment fails as deepfake_detected when deepfake_score >= enrollment_deepfake_threshold; null uses the spoof model's enrolment default, which refuses only when the detector is very sure (higher than the verification default), so real people can enrol.",
    }),
    reject_deepfake_enrollments: z.boolean().openapi({
      description:
        'Fail enrolments whose recording is judged synthetic or replayed (failure_reason deepfake_detected). Default true.',
    }),
    require_phrase: z.boolean().openapi({
      description:
        'Every verification must name a phrase (`challenge_id` or `text_id`; without one it is a 400 `phrase_required` on `challenge_id`), and one whose recording does not say it is `rejected` with failure_reason `phrase_not_matched`. Default false: the phrase is reported and the caller decides. Enrolments are not required to carry a phrase.',
    }),
    challenge_ttl_seconds: z
      .number()
      .int()
      .openapi({
        description: `How long a new challenge can be used, in seconds (${CHALLENGE_TTL_SECONDS.min} to ${CHALLENGE_TTL_SECONDS.max}; default ${CHALLENGE_TTL_SECONDS.default}).`,
        example: CHALLENGE_TTL_SECONDS.default,
      }),
  })
  .openapi('SettingsValues');

export const SettingsSchema = z
  .object({
    id: recordId(),
    org_id: recordId('Organisation identifier.'),
    settings: SettingsValuesSchema,
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('OrganisationSettings');

export const UpdateSettingsBodySchema = z
  .strictObject({
    org_id: z
      .number()
      .int()
      .positive()
      .openapi({ description: 'Must equal the organisation in the path.' }),
    settings: z
      .strictObject({
        alert_on_failure: z.boolean().optional(),
        callback_url: z
          .url({ protocol: /^https?$/, message: 'Must be an http(s) URL' })
          .max(2048)
          .nullable()
          .optional()
          .openapi({
            description:
              'https; plain http only for localhost when the server runs in development mode. null removes it.',
          }),
        match_threshold: unitInterval()
          .nullable()
          .optional()
          .openapi({ description: "0..1; null returns to the server's default." }),
        deepfake_threshold: unitInterval()
          .nullable()
          .optional()
          .openapi({ description: "0..1; null returns to the spoof model's default." }),
        enrollment_deepfake_threshold: unitInterval()
          .nullable()
          .optional()
          .openapi({ description: "0..1; null returns to the spoof model's enrolment default." }),
        reject_deepfake_enrollments: z.boolean().optional(),
        require_phrase: z.boolean().optional(),
        challenge_ttl_seconds: z
          .number()
          .int()
          .min(CHALLENGE_TTL_SECONDS.min)
          .max(CHALLENGE_TTL_SECONDS.max)
          .optional()
          .openapi({
            description: `Seconds, ${CHALLENGE_TTL_SECONDS.min} to ${CHALLENGE_TTL_SECONDS.max}; applies to challenges created afterwards.`,
          }),
      })
      .openapi({ description: 'The keys to change; keys left out stay unchanged.' }),
  })
  .openapi('UpdateSettingsRequest');
