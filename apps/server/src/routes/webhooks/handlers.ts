import type {
  listWebhookDeliveries,
  redeliverWebhook,
  rotateWebhookSecret,
  sendWebhookTest,
} from '@voxkey/contract';
import { DELIVERY_FILTER_FIELDS, DELIVERY_SORT_FIELDS } from '@voxkey/contract';
import { ApiError } from '../../errors.js';
import { parseListQuery, setPaginationHeaders } from '../../http/list-params.js';
import type { AppRouteHandler } from '../../http/types.js';
import * as webhooks from '../../repositories/webhooks.js';
import { rotateWebhookSecret as rotate } from '../../security/webhook-secrets.js';
import { queueWebhookTest } from '../../services/webhook-test.js';

export const rotateSecret: AppRouteHandler<typeof rotateWebhookSecret> = async (c) => {
  const { db } = c.get('deps').database;
  const result = await db
    .transaction()
    .execute((trx) => rotate(trx, c.get('deps').sealer, c.get('auth').orgId));
  return c.json(result, 201);
};

export const deliveries: AppRouteHandler<typeof listWebhookDeliveries> = async (c) => {
  const query = parseListQuery(c.req.valid('query'), DELIVERY_FILTER_FIELDS, DELIVERY_SORT_FIELDS);
  const result = await webhooks.listDeliveries(
    c.get('deps').database.db,
    c.get('auth').orgId,
    query,
  );
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(webhooks.toDelivery) }, 200);
};

export const redeliver: AppRouteHandler<typeof redeliverWebhook> = async (c) => {
  const row = await webhooks.requeueDelivery(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').delivery_id),
  );
  if (!row) throw ApiError.notFound('Webhook delivery');
  c.get('deps').signals.deliveryQueued();
  return c.json(webhooks.toDelivery(row), 202);
};

export const sendTest: AppRouteHandler<typeof sendWebhookTest> = async (c) => {
  const row = await queueWebhookTest(c.var.deps, c.var.auth.orgId);
  return c.json(webhooks.toDelivery(row), 202);
};
