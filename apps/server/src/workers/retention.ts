import type { AppDeps } from '../deps.js';
import { eraseJobs, jobsFinishedBefore, purgeFinishedDeliveries } from '../repositories/erasure.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/** One sweep: finished jobs and deliveries older than RECORD_RETENTION_DAYS lose their personal data / are deleted. */
export async function purgeExpiredRecords(
  deps: AppDeps,
  now = Date.now(),
): Promise<{ jobs: number; deliveries: number }> {
  const cutoff = new Date(now - deps.config.RECORD_RETENTION_DAYS * DAY_MS).toISOString();
  const db = deps.database.db;
  const jobs = await db.transaction().execute((trx) => eraseJobs(trx, jobsFinishedBefore(cutoff)));
  const deliveries = await purgeFinishedDeliveries(db, cutoff);
  return { jobs, deliveries };
}

/** Runs the retention sweep at start and then hourly in every process that runs workers (sweeps are idempotent). */
export function startRetentionSweeps(deps: AppDeps): { stop(): void } {
  const { logger } = deps.observability;
  const sweep = () =>
    purgeExpiredRecords(deps)
      .then((purged) => {
        if (purged.jobs || purged.deliveries)
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
