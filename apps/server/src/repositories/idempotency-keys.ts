import type { Executor } from '../db/connection.js';
import type { IdempotencyKeyRow } from '../db/types.js';
import { nowIso } from './clock.js';

/**
 * Claims (org, key) for one request. The unique index decides between concurrent duplicates:
 * exactly one insert succeeds; the others get undefined and read the winner's row.
 */
export function claimKey(
  db: Executor,
  values: { orgId: number; key: string; fingerprint: string },
): Promise<IdempotencyKeyRow | undefined> {
  const now = nowIso();
  return db
    .insertInto('idempotency_keys')
    .values({
      org_id: values.orgId,
      idempotency_key: values.key,
      request_fingerprint: values.fingerprint,
      status: 'in_progress',
      response_status: null,
      sealed_response: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['org_id', 'idempotency_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function findKey(
  db: Executor,
  orgId: number,
  key: string,
): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

export async function completeKey(
  db: Executor,
  id: number,
  responseStatus: number,
  sealedResponse: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      status: 'completed',
      response_status: responseStatus,
      sealed_response: sealedResponse,
      updated_at: nowIso(),
    })
    .where('id', '=', id)
    .execute();
}

/** Gives a claim up (the request failed and took no effect), so the key can be used again. */
export async function releaseKey(db: Executor, id: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('id', '=', id)
    .where('status', '=', 'in_progress')
    .execute();
}

/**
 * Deletes a row that no longer counts: created before `expiredBefore`, or still in progress since
 * before `abandonedBefore` (its process died). True when this call deleted it.
 */
export async function deleteStaleKey(
  db: Executor,
  id: number,
  expiredBefore: string,
  abandonedBefore: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', expiredBefore),
        eb.and([eb('status', '=', 'in_progress'), eb('updated_at', '<', abandonedBefore)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Removes every key created before `before`; returns how many. */
export async function purgeKeys(db: Executor, before: string): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** How long a key replays its first response (and refuses another request). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
