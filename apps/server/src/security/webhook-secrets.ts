import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Executor } from '../db/connection.js';
import * as webhooks from '../repositories/webhooks.js';
import type { Sealer } from './sealing.js';

export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const aad = (orgId: number) => `webhook-secret:${orgId}`;

export async function createWebhookSecret(
  db: Executor,
  sealer: Sealer,
  orgId: number,
): Promise<string> {
  const secret = generateWebhookSecret();
  await webhooks.insertSecret(db, orgId, sealer.seal(Buffer.from(secret, 'utf8'), aad(orgId)));
  return secret;
}

const KEY_CHECK_SECRETS = 10;

/**
 * The key tried on the database's newest webhook secrets: how many were tried, and the organisations
 * whose secret it could not open. A process given another key than the data was sealed with would
 * otherwise look healthy and fail every job and delivery that opens a sealed value.
 */
export async function checkKeyOnStoredSecrets(
  db: Executor,
  sealer: Sealer,
): Promise<{ tried: number; unopenedOrgIds: number[] }> {
  const stored = await webhooks.newestSecrets(db, KEY_CHECK_SECRETS);
  const unopenedOrgIds = stored
    .filter(({ org_id, sealed_secret }) => {
      try {
        sealer.open(sealed_secret, aad(org_id));
        return false;
      } catch {
        return true;
      }
    })
    .map(({ org_id }) => org_id);
  return { tried: stored.length, unopenedOrgIds };
}

/** Issues a new secret; the previous one keeps signing for 24 h so receivers can switch over. */
export async function rotateWebhookSecret(db: Executor, sealer: Sealer, orgId: number) {
  const previousExpiresAt = new Date(Date.now() + ROTATION_GRACE_MS).toISOString();
  const hadSecret = (await webhooks.activeSecrets(db, orgId)).length > 0;
  await webhooks.expireCurrentSecrets(db, orgId, previousExpiresAt);
  const secret = await createWebhookSecret(db, sealer, orgId);
  return { secret, previous_secret_expires_at: hadSecret ? previousExpiresAt : null };
}

/**
 * The secrets that sign now, newest first, from the organisation's active secrets as stored
 * (`sealedSecrets`); an organisation without one gets one.
 */
export async function openSigningSecrets(
  db: Executor,
  sealer: Sealer,
  orgId: number,
  sealedSecrets: string[],
): Promise<string[]> {
  if (sealedSecrets.length === 0) return [await createWebhookSecret(db, sealer, orgId)];
  return sealedSecrets.map((sealed) => sealer.open(sealed, aad(orgId)).toString('utf8'));
}

/** Standard Webhooks headers; during a rotation `webhook-signature` carries one `v1,` signature per secret. */
export function signatureHeaders(
  secrets: string[],
  webhookId: string,
  timestamp: Date,
  payload: string,
): Record<string, string> {
  const signatures = secrets.map((secret) =>
    new Webhook(secret).sign(webhookId, timestamp, payload),
  );
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
