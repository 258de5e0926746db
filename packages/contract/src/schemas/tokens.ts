import { z } from '../zod.js';
import { recordId, timestamp } from './common.js';

export const ApiTokenSchema = z
  .object({
    id: recordId('Token identifier.'),
    friendly_name: z.string().openapi({ example: 'billing-service' }),
    enabled: z.boolean(),
    expires_at: timestamp('When the token stops working; null when it never expires.').nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('ApiToken');

export const CreateApiTokenBodySchema = z
  .strictObject({
    friendly_name: z.string().trim().min(1).max(200).openapi({ example: 'billing-service' }),
    enabled: z.boolean(),
    expires_at: z.iso
      .datetime({ offset: true, message: 'Must be an ISO 8601 date-time' })
      .optional()
      .openapi({
        description:
          'When the token stops working; must be in the future. When omitted the token never expires. ' +
          'A token cannot outlive the token that creates it: when the token making the request expires (a trial token, or any token with an `expires_at`), ' +
          "`expires_at` is required and must be no later than that token's own expiry, else 400 `outlives_creator` on `expires_at` (nothing is shortened silently). " +
          'A token that never expires can be created by a token that never expires, or by the operator (`voxkey token create`).',
        example: '2027-03-01T00:00:00Z',
      }),
  })
  .openapi('CreateApiTokenRequest');

export const CreatedApiTokenSchema = z
  .object({
    bearer: z.string().openapi({
      description: 'The raw token. Shown only here, once.',
      example: 'vk_live_3q2T...',
    }),
    token: ApiTokenSchema,
  })
  .openapi('CreatedApiToken');

export const UpdateApiTokenBodySchema = z
  .strictObject({ enabled: z.boolean() })
  .openapi('UpdateApiTokenRequest');
