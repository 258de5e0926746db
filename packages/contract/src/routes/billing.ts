import { createRoute, z } from '@hono/zod-openapi';
import { commonErrorResponses, jsonResponse, OrgPathParams, pathId } from '../schemas/common.js';
import { listQuerySchema, listResponse } from '../schemas/list.js';
import {
  InvoiceSchema,
  PLAN_FILTER_FIELDS,
  PLAN_SORT_FIELDS,
  PlanSchema,
  SubscriptionSchema,
} from '../schemas/billing.js';

const tags = ['Billing'];

export const listPlans = createRoute({
  method: 'get',
  path: '/plans',
  operationId: 'listPlans',
  'x-voxkey-retry': 'safe',
  summary: 'List plans',
  tags,
  request: { query: listQuerySchema(PLAN_FILTER_FIELDS, PLAN_SORT_FIELDS) },
  responses: {
    200: listResponse(PlanSchema, 'PlanList', 'A page of plans.'),
    ...commonErrorResponses,
  },
});

export const getPlan = createRoute({
  method: 'get',
  path: '/plans/{plan_id}',
  operationId: 'getPlan',
  'x-voxkey-retry': 'safe',
  summary: 'Get a plan',
  tags,
  request: { params: z.object({ plan_id: pathId('plan_id', 'Plan identifier.') }) },
  responses: { 200: jsonResponse(PlanSchema, 'The plan.'), ...commonErrorResponses },
});

export const getSubscription = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/subscriptions/{subscription_id}',
  operationId: 'getSubscription',
  'x-voxkey-retry': 'safe',
  summary: 'Get a subscription',
  tags,
  request: {
    params: OrgPathParams.extend({
      subscription_id: pathId('subscription_id', 'Subscription identifier.'),
    }),
  },
  responses: {
    200: jsonResponse(SubscriptionSchema, 'The subscription.'),
    ...commonErrorResponses,
  },
});

export const getInvoice = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/invoices/{invoice_id}',
  operationId: 'getInvoice',
  'x-voxkey-retry': 'safe',
  summary: 'Get an invoice',
  tags,
  request: {
    params: OrgPathParams.extend({ invoice_id: pathId('invoice_id', 'Invoice identifier.') }),
  },
  responses: { 200: jsonResponse(InvoiceSchema, 'The invoice.'), ...commonErrorResponses },
});

export const billingRoutes = { listPlans, getPlan, getSubscription, getInvoice };
