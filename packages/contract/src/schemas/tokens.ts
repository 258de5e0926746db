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
        description: 'Optional. When omitted the token never expires. Must be in the future.',
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
