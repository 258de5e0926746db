import type {
  getInvoice,
  getPlan,
  getSubscription,
  listInvoices,
  listPlans,
  listSubscriptions,
} from '@voxkey/contract';
import {
  INVOICE_FILTER_FIELDS,
  INVOICE_SORT_FIELDS,
  PLAN_FILTER_FIELDS,
  PLAN_SORT_FIELDS,
  SUBSCRIPTION_FILTER_FIELDS,
  SUBSCRIPTION_SORT_FIELDS,
} from '@voxkey/contract';
import { ApiError } from '../../errors.js';
import { parseListQuery, setPaginationHeaders } from '../../http/list-params.js';
import type { AppRouteHandler } from '../../http/types.js';
import * as billing from '../../repositories/billing.js';

export const plans: AppRouteHandler<typeof listPlans> = async (c) => {
  const query = parseListQuery(c.req.valid('query'), PLAN_FILTER_FIELDS, PLAN_SORT_FIELDS);
  const result = await billing.listPlans(c.get('deps').database.db, query);
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(billing.toPlan) }, 200);
};

export const plan: AppRouteHandler<typeof getPlan> = async (c) => {
  const row = await billing.findPlan(
    c.get('deps').database.db,
    Number(c.req.valid('param').plan_id),
  );
  if (!row) throw ApiError.notFound('Plan');
  return c.json(billing.toPlan(row), 200);
};

export const subscriptions: AppRouteHandler<typeof listSubscriptions> = async (c) => {
  const query = parseListQuery(
    c.req.valid('query'),
    SUBSCRIPTION_FILTER_FIELDS,
    SUBSCRIPTION_SORT_FIELDS,
  );
  const result = await billing.listSubscriptions(
    c.get('deps').database.db,
    c.get('auth').orgId,
    query,
  );
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(billing.toSubscription) }, 200);
};

export const subscription: AppRouteHandler<typeof getSubscription> = async (c) => {
  const row = await billing.findSubscription(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').subscription_id),
  );
  if (!row) throw ApiError.notFound('Subscription');
  return c.json(billing.toSubscription(row), 200);
};

export const invoices: AppRouteHandler<typeof listInvoices> = async (c) => {
  const query = parseListQuery(c.req.valid('query'), INVOICE_FILTER_FIELDS, INVOICE_SORT_FIELDS);
  const result = await billing.listInvoices(c.get('deps').database.db, c.get('auth').orgId, query);
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(billing.toInvoice) }, 200);
};

export const invoice: AppRouteHandler<typeof getInvoice> = async (c) => {
  const row = await billing.findInvoice(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').invoice_id),
  );
  if (!row) throw ApiError.notFound('Invoice');
  return c.json(billing.toInvoice(row), 200);
};
