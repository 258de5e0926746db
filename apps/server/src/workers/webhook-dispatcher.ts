import type { DeliveryStatus, WebhookDeliveryRow } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import { claimDelivery, findDeliveryTarget, recordAttempt } from '../repositories/webhooks.js';
import { callbackPolicy } from '../security/callback-url.js';
import { type PostResult, postJson } from '../security/outbound-http.js';
import { openSigningSecrets, signatureHeaders } from '../security/webhook-secrets.js';
import { workerOwnerId } from './owner-id.js';
import { WakeableLoop } from './wakeable-loop.js';
import { isDatabaseUnavailable } from '../db/errors.js';

/** Delay before the next attempt: the schedule's step with ±20 % jitter, or null when retries are exhausted. */
export function nextDelayMs(
  schedule: number[],
  attemptsMade: number,
  random = Math.random,
): number | null {
  const step = schedule[attemptsMade - 1];
  if (step === undefined) return null;
  return Math.round(step * (0.8 + 0.4 * random()));
}

/** The first attempt plus one retry per step of the schedule. */
export const maxDeliveryAttempts = (schedule: number[]) => schedule.length + 1;
const POISON_ERROR = 'attempt limit reached without an outcome';

async function attempt(deps: AppDeps, delivery: WebhookDeliveryRow): Promise<PostResult> {
  const target = await findDeliveryTarget(deps.database.db, delivery.org_id);
  if (!target.callbackUrl)
    return { statusCode: null, error: 'No callback URL configured', reason: 'no_callback_url' };
  const secrets = await openSigningSecrets(
    deps.database.db,
    deps.sealer,
    delivery.org_id,
    target.sealedSecrets,
  );
  const headers = signatureHeaders(secrets, delivery.webhook_id, new Date(), delivery.payload);
  return postJson(target.callbackUrl, delivery.payload, headers, {
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    policy: callbackPolicy(deps.config),
  });
}

/** Delivers the outbox at least once: 2xx delivered, 410 stops, anything else retries on the schedule. */
export function createWebhookDispatcher(deps: AppDeps) {
  const { logger, metrics } = deps.observability;
  const onError = (err: unknown) => logger.error({ err }, 'webhook dispatcher error');
  const owner = workerOwnerId();
  const leaseMs = deps.config.WEBHOOK_TIMEOUT_MS * 3;
  const loop = new WakeableLoop(
    async () => {
      if (loop.isStopping) return false;
      const delivery = await claimDelivery(deps.database.db, deps.database.dialect, owner, leaseMs);
      if (!delivery) return false;
      if (delivery.attempts > maxDeliveryAttempts(deps.config.WEBHOOK_RETRY_SCHEDULE)) {
        // Earlier attempts never recorded an outcome (the dispatcher died or could not commit): stop here.
        await recordAttempt(deps.database.db, delivery.id, owner, {
          status: 'failed',
          statusCode: null,
          error: POISON_ERROR,
          nextAttemptAt: null,
        });
        metrics.webhookAttempts.inc({ outcome: 'failed' });
        logger.error(
          {
            deliveryId: delivery.id,
            orgId: delivery.org_id,
            webhookId: delivery.webhook_id,
            attempts: delivery.attempts,
          },
          'webhook delivery exceeded its attempt limit; marked failed',
        );
        return true;
      }
      const { statusCode, error, reason } = await attempt(deps, delivery);
      let status: DeliveryStatus;
      let nextAttemptAt: string | null = null;
      if (statusCode !== null && statusCode >= 200 && statusCode < 300) status = 'delivered';
      else if (statusCode === 410) status = 'failed';
      else {
        const delay = nextDelayMs(deps.config.WEBHOOK_RETRY_SCHEDULE, delivery.attempts);
        status = delay === null ? 'failed' : 'pending';
        if (delay !== null) nextAttemptAt = new Date(Date.now() + delay).toISOString();
      }
      // The delivery log (API) gets a coarse reason; the raw error, which may name local ports, only the server log.
      const lastError =
        error !== null
          ? (reason ?? 'network_error')
          : status === 'delivered'
            ? null
            : `receiver answered ${statusCode}`;
      await recordAttempt(deps.database.db, delivery.id, owner, {
        status,
        statusCode,
        error: lastError,
        nextAttemptAt,
      });
      metrics.webhookAttempts.inc({ outcome: status });
      if (delivery.attempts > 1) metrics.webhookRetries.inc();
      logger.info(
        {
          deliveryId: delivery.id,
          orgId: delivery.org_id,
          webhookId: delivery.webhook_id,
          attempt: delivery.attempts,
          statusCode,
          outcome: status,
          error,
          nextAttemptAt,
        },
        'webhook attempt',
      );
      return true;
    },
    {
      concurrency: deps.config.WEBHOOK_CONCURRENCY,
      pollMs: Math.min(deps.config.JOB_POLL_MS, 1000),
      onError,
      backsOff: isDatabaseUnavailable,
    },
  );
  return { start: () => loop.start(), wake: () => loop.wake(), stop: () => loop.stop() };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
