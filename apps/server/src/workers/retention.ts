import type { AppDeps } from '../deps.js';
import { purgeChallengesExpiredBefore } from '../repositories/challenges.js';
import { eraseJobs, jobsFinishedBefore, purgeFinishedDeliveries } from '../repositories/erasure.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * One sweep: finished jobs and deliveries older than RECORD_RETENTION_DAYS lose their personal data /
 * are deleted, and challenges are deleted a day after they expired (until then a late request gets
 * `challenge_expired` rather than `challenge_not_found`).
 */
export async function purgeExpiredRecords(
  deps: AppDeps,
  now = Date.now(),
): Promise<{ jobs: number; deliveries: number; challenges: number }> {
  const cutoff = new Date(now - deps.config.RECORD_RETENTION_DAYS * DAY_MS).toISOString();
  const db = deps.database.db;
  const jobs = await db.transaction().execute((trx) => eraseJobs(trx, jobsFinishedBefore(cutoff)));
  const deliveries = await purgeFinishedDeliveries(db, cutoff);
  const challenges = await purgeChallengesExpiredBefore(db, new Date(now - DAY_MS).toISOString());
  return { jobs, deliveries, challenges };
}

/** Runs the retention sweep at start and then hourly in every process that runs workers (sweeps are idempotent). */
export function startRetentionSweeps(deps: AppDeps): { stop(): void } {
  const { logger } = deps.observability;
  const sweep = () =>
    purgeExpiredRecords(deps)
      .then((purged) => {
        if (purged.jobs || purged.deliveries || purged.challenges)
          logger.info(
            { ...purged, retentionDays: deps.config.RECORD_RETENTION_DAYS },
            'retention: expired records purged',
          );
      })
      .catch((err) => logger.error({ err }, 'retention sweep failed'));
  void sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
