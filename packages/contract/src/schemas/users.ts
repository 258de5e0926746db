import type { FieldTypes } from '../list-query.js';
import { z } from '../zod.js';
import { recordId, timestamp } from './common.js';

export const UserSchema = z
  .object({
    id: recordId("Service-assigned identifier (not the caller's external_id)."),
    org_id: recordId('Organisation identifier.'),
    external_id: z.string().openapi({ example: 'customer-42' }),
    is_active: z.boolean(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('User');

export const UpdateUserBodySchema = z
  .strictObject({
    is_active: z.boolean().default(true).openapi({ description: 'Defaults to true when omitted.' }),
  })
  .openapi('UpdateUserRequest');

export const USER_FILTER_FIELDS = {
  id: 'integer',
  external_id: 'string',
  is_active: 'boolean',
  created_at: 'timestamp',
  updated_at: 'timestamp',
} as const satisfies FieldTypes;
export const USER_SORT_FIELDS = ['id', 'external_id', 'created_at', 'updated_at'] as const;

export const DeviceSchema = z
  .object({
    id: recordId(),
    user_id: recordId('The user the device was used by.'),
    fingerprint: z.string().openapi({ example: 'a1b2c3d4' }),
    type: z.number().int().min(0).max(3).openapi({
      description: '0 unknown, 1 mobile phone, 2 desktop or laptop, 3 IP or desk phone.',
    }),
    last_used: timestamp(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('Device');
