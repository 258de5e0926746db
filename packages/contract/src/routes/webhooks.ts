import { createRoute, z } from '@hono/zod-openapi';
import {
  commonErrorResponses,
  IdempotencyKeyHeaders,
  idempotencyConflictResponse,
  idempotentResponse,
  OrgPathParams,
  pathId,
  webhookTestConflictResponse,
} from '../schemas/common.js';
import { listQuerySchema, listResponse } from '../schemas/list.js';
import {
  DELIVERY_FILTER_FIELDS,
  DELIVERY_SORT_FIELDS,
  EnrollmentCompletedEventSchema,
  VerificationCompletedEventSchema,
  WebhookTestEventSchema,
  WebhookDeliverySchema,
  WebhookSecretSchema,
} from '../schemas/voice.js';

const tags = ['Webhooks'];

export const rotateWebhookSecret = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/webhook-secret',
  operationId: 'rotateWebhookSecret',
  'x-voxkey-retry': 'idempotency-key',
  summary: 'Rotate the webhook signing secret',
  description:
    'Returns the new secret once. For 24 hours the previous secret signs too, so receivers can switch over.',
  tags,
  request: { params: OrgPathParams, headers: IdempotencyKeyHeaders },
  responses: {
    201: idempotentResponse(WebhookSecretSchema, 'The new secret.'),
    ...commonErrorResponses,
    ...idempotencyConflictResponse,
  },
});

export const listWebhookDeliveries = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/webhook-deliveries',
  operationId: 'listWebhookDeliveries',
  'x-voxkey-retry': 'safe',
  summary: 'List webhook deliveries',
  tags,
  request: {
    params: OrgPathParams,
    query: listQuerySchema(DELIVERY_FILTER_FIELDS, DELIVERY_SORT_FIELDS),
  },
  responses: {
    200: listResponse(WebhookDeliverySchema, 'WebhookDeliveryList', 'A page of deliveries.'),
    ...commonErrorResponses,
  },
});

export const redeliverWebhook = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/webhook-deliveries/{delivery_id}/redeliver',
  operationId: 'redeliverWebhook',
  'x-voxkey-retry': 'idempotency-key',
  summary: 'Deliver a webhook again',
  description:
    'Queues the same event (same `webhook-id`) for immediate delivery, whatever its status, as a fresh delivery: `attempts` back to 0 and the last error cleared, so one whose retries ran out is sent again with every retry.',
  tags,
  request: {
    params: OrgPathParams.extend({ delivery_id: pathId('delivery_id', 'Delivery identifier.') }),
    headers: IdempotencyKeyHeaders,
  },
  responses: {
    202: idempotentResponse(WebhookDeliverySchema, 'The delivery, queued again.'),
    ...commonErrorResponses,
    ...idempotencyConflictResponse,
  },
});

export const sendWebhookTest = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/webhook-test',
  operationId: 'sendWebhookTest',
  'x-voxkey-retry': 'idempotency-key',
  summary: 'Send a test event to the callback URL',
  description:
    'Queues a signed `webhook.test` event to the configured callback URL, delivered and retried like any event and listed in the delivery log, so a receiver and its signature check can be tried without enrolling anyone. 409 `no_callback_url` when none is configured.',
  tags,
  request: { params: OrgPathParams, headers: IdempotencyKeyHeaders },
  responses: {
    202: idempotentResponse(WebhookDeliverySchema, 'The queued delivery of the test event.'),
    ...commonErrorResponses,
    ...webhookTestConflictResponse,
  },
});

export const webhookRoutes = {
  rotateWebhookSecret,
  listWebhookDeliveries,
  redeliverWebhook,
  sendWebhookTest,
};

const SignatureHeadersSchema = z.object({
  'webhook-id': z
    .string()
    .openapi({ description: 'Unique per event; the same on every retry. Use it to de-duplicate.' }),
  'webhook-timestamp': z
    .string()
    .openapi({ description: 'Unix seconds when this attempt was signed.' }),
  'webhook-signature': z.string().openapi({
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` signatures (Standard Webhooks); two during a secret rotation.',
  }),
});

const webhook = (
  name: string,
  schema:
    | typeof VerificationCompletedEventSchema
    | typeof EnrollmentCompletedEventSchema
    | typeof WebhookTestEventSchema,
  summary: string,
) =>
  createRoute({
    method: 'post',
    path: name,
    operationId: name.replace('.', '_'),
    summary,
    tags,
    request: {
      headers: SignatureHeadersSchema,
      body: { required: true, content: { 'application/json': { schema } } },
    },
    responses: {
      200: {
        description:
          'Any 2xx acknowledges the event. 410 stops retries; anything else is retried with backoff.',
      },
      410: { description: 'Gone: stop delivering this event.' },
    },
  });

/** Events sent to the organisation's callback URL, documented as OpenAPI 3.1 webhooks (header schema in the description). */
export const webhookEvents = {
  verificationCompleted: webhook(
    'verification.completed',
    VerificationCompletedEventSchema,
    'Result of a verification',
  ),
  enrollmentCompleted: webhook(
    'enrollment.completed',
    EnrollmentCompletedEventSchema,
    'Result of an enrolment',
  ),
  webhookTest: webhook(
    'webhook.test',
    WebhookTestEventSchema,
    'A test event (sent by sendWebhookTest)',
  ),
};
