import type { FieldTypes } from '../list-query.js';
import { z } from '../zod.js';
import { recordId, timestamp } from './common.js';

export const PlanSchema = z
  .object({
    id: recordId(),
    details: z.object({
      name: z.string().openapi({ example: 'Starter' }),
      monthly_calls_included: z.number().int().openapi({ example: 5000 }),
      overage_rate_gbp: z
        .number()
        .openapi({ description: 'Price per call beyond the quota.', example: 0.02 }),
    }),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('Plan');

export const PLAN_FILTER_FIELDS = {
  id: 'integer',
  name: 'string',
  monthly_calls_included: 'integer',
  created_at: 'timestamp',
} as const satisfies FieldTypes;
export const PLAN_SORT_FIELDS = ['id', 'name', 'monthly_calls_included', 'created_at'] as const;

const calendarDate = () => z.string().openapi({ format: 'date', example: '2026-11-01' });

export const SubscriptionSchema = z
  .object({
    id: recordId(),
    org_id: recordId('Organisation identifier.'),
    plan_id: recordId('Plan identifier.'),
    start_date: calendarDate(),
    end_date: calendarDate()
      .nullable()
      .openapi({ description: 'null while the subscription runs on.' }),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('Subscription');

export const SUBSCRIPTION_FILTER_FIELDS = {
  id: 'integer',
  plan_id: 'integer',
  created_at: 'timestamp',
} as const satisfies FieldTypes;
export const SUBSCRIPTION_SORT_FIELDS = ['id', 'created_at'] as const;

export const InvoiceSchema = z
  .object({
    id: recordId(),
    org_id: recordId('Organisation identifier.'),
    sub_id: recordId('Subscription the invoice belongs to.'),
    invoice_sequence: z
      .number()
      .int()
      .openapi({ description: 'Per-organisation invoice number, from 1.' }),
    quotas: z.object({
      monthly_verifications: z.number().int(),
      overage_calls: z.number().int(),
    }),
    file_ref: z.string().openapi({
      description: 'Reference to the invoice document.',
      example: 'invoices/1/2026-10-0001.json',
    }),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi('Invoice');

export const INVOICE_FILTER_FIELDS = {
  id: 'integer',
  sub_id: 'integer',
  invoice_sequence: 'integer',
  created_at: 'timestamp',
} as const satisfies FieldTypes;
export const INVOICE_SORT_FIELDS = ['id', 'invoice_sequence', 'created_at'] as const;
