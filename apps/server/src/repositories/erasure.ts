import { type ExpressionBuilder, sql } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { DB, FailureReason } from '../db/types.js';
import { nowIso } from './clock.js';

type JobFilter = (
  eb: ExpressionBuilder<DB, 'jobs'>,
) => ReturnType<ExpressionBuilder<DB, 'jobs'>['and']>;

/**
 * Erases the personal data of the jobs `filter` selects: their webhook deliveries are deleted
 * (pending ones are never sent, sent ones purged), and each job keeps what metering needs
 * (organisation, kind, status, failure reason, latency, timestamps) and how the request was made
 * (language, mode, thresholds, model ids, sample count). The external id becomes `erased:<job id>`;
 * fingerprints, user id, result, every score, recording quality and the phrase's text and transcript
 * are cleared, and a recording still held is deleted; GETs answer 404.
 * Jobs still queued or processing end as `failed` with `user_deleted`, so no worker sends them.
 */
export async function eraseJobs(
  db: Executor,
  filter: JobFilter,
  options: { inFlightReason?: FailureReason } = {},
): Promise<number> {
  const now = nowIso();
  const selected = db.selectFrom('jobs').select('id').where(filter).where('erased_at', 'is', null);
  await db.deleteFrom('webhook_deliveries').where('job_id', 'in', selected).execute();
  if (options.inFlightReason) {
    await db
      .updateTable('jobs')
      .set({
        status: 'failed',
        failure_reason: options.inFlightReason,
        lease_owner: null,
        lease_expires_at: null,
        completed_at: now,
      })
      .where(filter)
      .where('status', 'in', ['queued', 'processing'])
      .execute();
  }
  const ending = selected.where('status', 'in', ['completed', 'failed']);
  await db.deleteFrom('job_recordings').where('job_id', 'in', ending).execute();
  const erased = await db
    .updateTable('jobs')
    .set({
      external_id: sql<string>`'erased:' || cast(id as text)`,
      body_hash: 'erased',
      device_fingerprint: null,
      device_type: null,
      user_id: null,
      result: null,
      match_score: null,
      deepfake_detected: null,
      deepfake_score: null,
      quality_score: null,
      recording_quality: null,
      device_mismatch: null,
      phrase_expected: null,
      phrase_transcript: null,
      phrase_match_score: null,
      phrase_matched: null,
      erased_at: now,
      updated_at: now,
    })
    .where(filter)
    .where('erased_at', 'is', null)
    .where('status', 'in', ['completed', 'failed'])
    .executeTakeFirst();
  return Number(erased.numUpdatedRows);
}

/** Every job about one user of an organisation: by its user id or by its external id (requests for it before or after enrolment). */
export function jobsOfUser(orgId: number, userId: number, externalId: string): JobFilter {
  return (eb) =>
    eb.and([
      eb('org_id', '=', orgId),
      eb.or([eb('user_id', '=', userId), eb('external_id', '=', externalId)]),
    ]);
}

/** Finished jobs (and so their deliveries) older than the retention period. */
export function jobsFinishedBefore(cutoffIso: string): JobFilter {
  return (eb) =>
    eb.and([eb('status', 'in', ['completed', 'failed']), eb('completed_at', '<', cutoffIso)]);
}

/** Deliveries that reached a final state before the cutoff and whose job is otherwise kept. */
export async function purgeFinishedDeliveries(db: Executor, cutoffIso: string): Promise<number> {
  const purged = await db
    .deleteFrom('webhook_deliveries')
    .where('status', 'in', ['delivered', 'failed'])
    .where('updated_at', '<', cutoffIso)
    .executeTakeFirst();
  return Number(purged.numDeletedRows);
}
