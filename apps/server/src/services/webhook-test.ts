import { randomUUID } from 'node:crypto';
import type { WebhookTestEventSchema, z } from '@voxkey/contract';
import type { WebhookDeliveryRow } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { nowIso } from '../repositories/clock.js';
import { findSettings } from '../repositories/organisations.js';
import { insertDelivery } from '../repositories/webhooks.js';

type WebhookTestEvent = z.infer<typeof WebhookTestEventSchema>;

/**
 * Queues a `webhook.test` event for the organisation's callback URL. It goes through the same outbox
 * as job results (signed, retried, listed in the delivery log) but belongs to no job.
 */
export async function queueWebhookTest(deps: AppDeps, orgId: number): Promise<WebhookDeliveryRow> {
  const settings = await findSettings(deps.database.db, orgId);
  if (!settings?.callback_url) {
    throw new ApiError(
      'no_callback_url',
      `No callback URL is configured: set one with PATCH /v1/organisations/${orgId}/settings {"org_id": ${orgId}, "settings": {"callback_url": "https://..."}}`,
    );
  }
  const event: WebhookTestEvent = {
    event_type: 'webhook.test',
    request_uuid: randomUUID(),
    organisation_id: orgId,
    message: 'Test event from Voxkey: your receiver and signature check work.',
    created_at: nowIso(),
  };
  const delivery = await insertDelivery(deps.database.db, {
    orgId,
    jobId: null,
    webhookId: `msg_${randomUUID()}`,
    eventType: event.event_type,
    requestUuid: event.request_uuid,
    payload: JSON.stringify(event),
  });
  deps.signals.deliveryQueued();
  return delivery;
}
