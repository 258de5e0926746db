import type { AppDeps } from '../deps.js';
import { claimJob } from '../repositories/jobs.js';
import { checkFailureRate } from './failure-alerts.js';
import { processJob, type VoiceAnalyzer } from './job-processor.js';
import { workerOwnerId } from './owner-id.js';
import { WakeableLoop } from './wakeable-loop.js';
import { isDatabaseUnavailable } from '../db/errors.js';

/** Claims queued jobs and runs them through the engine, as many at once as the engine has threads. */
export function createJobRunner(deps: AppDeps, engine: VoiceAnalyzer, concurrency: number) {
  const { logger, metrics } = deps.observability;
  const owner = workerOwnerId();
  const onError = (err: unknown) => logger.error({ err }, 'job runner error');
  const loop = new WakeableLoop(
    async () => {
      // A degraded engine (stuck thread) takes no new jobs; other processes, or this one restarted, will.
      if (loop.isStopping || deps.engineHealth?.() === 'degraded') return false;
      const job = await claimJob(
        deps.database.db,
        deps.database.dialect,
        owner,
        deps.config.JOB_LEASE_MS,
      );
      if (!job) return false;
      const context = {
        jobId: job.id,
        orgId: job.org_id,
        kind: job.kind,
        requestUuid: job.request_uuid,
        attempt: job.attempts,
      };
      logger.info(context, 'job claimed');
      const { result, timings } = await processJob(deps, engine, job, owner);
      metrics.jobsProcessed.inc({ kind: job.kind, outcome: result });
      if (timings)
        for (const [stage, ms] of Object.entries(timings))
          metrics.inferenceStage.observe({ stage }, ms / 1000);
      if (result === 'completed')
        metrics.jobLatency.observe(
          { kind: job.kind },
          (Date.now() - Date.parse(job.created_at)) / 1000,
        );
      logger.info(
        { ...context, result },
        result === 'lost' ? 'job lease lost to another worker' : `job ${result}`,
      );
      if (result === 'completed' && job.kind === 'verification') {
        await checkFailureRate(deps, job.org_id).catch(onError);
      }
      return true;
    },
    { concurrency, pollMs: deps.config.JOB_POLL_MS, onError, backsOff: isDatabaseUnavailable },
  );
  return { owner, start: () => loop.start(), wake: () => loop.wake(), stop: () => loop.stop() };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
