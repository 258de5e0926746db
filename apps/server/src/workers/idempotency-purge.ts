import type { AppDeps } from '../deps.js';
import { IDEMPOTENCY_KEY_TTL_MS, purgeKeys } from '../repositories/idempotency-keys.js';

const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** Deletes Idempotency-Key rows (and the sealed responses they hold) older than 24 hours; returns how many. */
export async function purgeExpiredIdempotencyKeys(
  deps: AppDeps,
  now = Date.now(),
): Promise<number> {
  return purgeKeys(deps.database.db, new Date(now - IDEMPOTENCY_KEY_TTL_MS).toISOString());
}

/** Runs the purge at start and hourly in every process that runs workers (several processes purging is harmless). */
export function createIdempotencyPurger(deps: AppDeps) {
  const { logger } = deps.observability;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = purgeExpiredIdempotencyKeys(deps).then(
      (purged) => {
        if (purged > 0) logger.info({ purged }, 'expired idempotency keys purged');
      },
      (err) => logger.error({ err }, 'idempotency key purge failed'),
    );
  };
  return {
    start() {
      run();
      timer = setInterval(run, PURGE_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
