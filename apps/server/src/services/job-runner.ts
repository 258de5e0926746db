import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AppDeps } from '../http/types.js';
import { claimJob } from '../repositories/jobs.js';
import { checkFailureRate } from './alerts.js';
import { processJob, type VoiceAnalyzer } from './job-processor.js';
import { WakeableLoop } from './wakeable-loop.js';

export interface JobRunnerEvents {
  onError(err: unknown): void;
  onJobDone?(info: { jobId: number; kind: string; result: string }): void;
}

/** Claims queued jobs and runs them through the engine, as many at once as the engine has threads. */
export function createJobRunner(deps: AppDeps, engine: VoiceAnalyzer, concurrency: number, events: JobRunnerEvents) {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const loop = new WakeableLoop(
    async () => {
      if (loop.isStopping) return false;
      const job = await claimJob(deps.database.db, deps.database.dialect, owner, deps.config.JOB_LEASE_MS);
      if (!job) return false;
      const result = await processJob(deps, engine, job, owner);
      events.onJobDone?.({ jobId: job.id, kind: job.kind, result });
      if (result === 'completed' && job.kind === 'verification') {
        await checkFailureRate(deps, job.org_id).catch(events.onError);
      }
      return true;
    },
    { concurrency, pollMs: deps.config.JOB_POLL_MS, onError: events.onError },
  );
  return { owner, start: () => loop.start(), wake: () => loop.wake(), stop: () => loop.stop() };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
