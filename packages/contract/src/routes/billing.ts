import { createRoute, z } from '@hono/zod-openapi';
import { commonErrorResponses, jsonResponse, OrgPathParams, pathId } from '../schemas/common.js';
import { listQuerySchema, listResponse } from '../schemas/list.js';
import {
  INVOICE_FILTER_FIELDS,
  INVOICE_SORT_FIELDS,
  InvoiceSchema,
  PLAN_FILTER_FIELDS,
  PLAN_SORT_FIELDS,
  PlanSchema,
  SUBSCRIPTION_FILTER_FIELDS,
  SUBSCRIPTION_SORT_FIELDS,
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

export const listSubscriptions = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/subscriptions',
  operationId: 'listSubscriptions',
  'x-voxkey-retry': 'safe',
  summary: 'List subscriptions',
  description:
    "The organisation's own subscriptions, each as `getSubscription` returns it (`end_date` null while it runs on). " +
    'Oldest first (`id` ascending) like every list; `sort=id:desc` gives the newest first.',
  tags,
  request: {
    params: OrgPathParams,
    query: listQuerySchema(SUBSCRIPTION_FILTER_FIELDS, SUBSCRIPTION_SORT_FIELDS),
  },
  responses: {
    200: listResponse(SubscriptionSchema, 'SubscriptionList', 'A page of subscriptions.'),
    ...commonErrorResponses,
  },
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

export const listInvoices = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/invoices',
  operationId: 'listInvoices',
  'x-voxkey-retry': 'safe',
  summary: 'List invoices',
  description:
    "The organisation's own invoices, each as `getInvoice` returns it; one subscription's with `filter=sub_id=<id>`. " +
    'Oldest first (`id` ascending) like every list; `sort=id:desc` gives the newest first.',
  tags,
  request: {
    params: OrgPathParams,
    query: listQuerySchema(INVOICE_FILTER_FIELDS, INVOICE_SORT_FIELDS),
  },
  responses: {
    200: listResponse(InvoiceSchema, 'InvoiceList', 'A page of invoices.'),
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

export const billingRoutes = {
  listPlans,
  getPlan,
  listSubscriptions,
  getSubscription,
  listInvoices,
  getInvoice,
};
