import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { isEngineError } from '@voxkey/engine';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { eraseJobs } from '../src/repositories/erasure.js';
import { claimJob, findJobRecording } from '../src/repositories/jobs.js';
import { insertDelivery } from '../src/repositories/webhooks.js';
import { sealRecording } from '../src/security/recordings.js';
import { watchEngine } from '../src/workers/engine-watchdog.js';
import { processJob } from '../src/workers/job-processor.js';
import { createJobRunner } from '../src/workers/job-runner.js';
import { createWebhookDispatcher } from '../src/workers/webhook-dispatcher.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { fakeAnalyzer } from './support/fake-engine.js';
import { seedJob, seedJobRecording, silentWav } from './support/fixtures.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function queueJob(
  ctx: TestContext,
  values: { externalId: string; attempts?: number; status?: 'queued' | 'processing' },
) {
  const requestUuid = randomUUID();
  const expired = new Date(Date.now() - 1000).toISOString();
  const job = await seedJob(ctx, {
    org_id: ctx.orgA.id,
    kind: 'enrollment',
    request_uuid: requestUuid,
    external_id: values.externalId,
    status: values.status ?? 'queued',
    attempts: values.attempts ?? 0,
    // A processing job with an expired lease: its worker died mid-job.
    lease_owner: values.status === 'processing' ? 'dead-worker' : null,
    lease_expires_at: values.status === 'processing' ? expired : null,
  });
  await seedJobRecording(
    ctx,
    job.id,
    sealRecording(ctx.deps.sealer, ctx.orgA.id, requestUuid, Buffer.from(silentWav(), 'base64')),
  );
  return job;
}

function memoryLogger() {
  const lines: any[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
  return { logger, lines };
}

describe(`poison jobs and deliveries end (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  afterEach(() => ctx.cleanup());

  it('a job erased after its claim (the recording is gone) is left to what ended it: no engine call, no retry', async () => {
    ctx = await createTestContext();
    const job = await queueJob(ctx, { externalId: 'gone' });
    const claimed = await claimJob(ctx.db, ctx.database.dialect, 'worker-1', 60_000);
    expect(claimed?.id).toBe(job.id);
    await eraseJobs(ctx.db, (eb) => eb('id', '=', job.id), { inFlightReason: 'user_deleted' });
    const engine = fakeAnalyzer();
    expect(await processJob(ctx.deps, engine, claimed!, 'worker-1')).toEqual({ result: 'lost' });
    expect(engine.calls).toBe(0);
    const row = await ctx.db
      .selectFrom('jobs')
      .select(['status', 'failure_reason'])
      .where('id', '=', job.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', failure_reason: 'user_deleted' });
  });

  it('a job whose workers keep dying is failed at claim time with processing_error, one webhook, no engine call', async () => {
    ctx = await createTestContext({ JOB_MAX_ATTEMPTS: '3' });
    const job = await queueJob(ctx, { externalId: 'killer', attempts: 3, status: 'processing' });
    const engine = fakeAnalyzer();
    const claimed = await claimJob(ctx.db, ctx.database.dialect, 'worker-1', 60_000);
    expect(claimed?.id).toBe(job.id);
    expect(await processJob(ctx.deps, engine, claimed!, 'worker-1')).toMatchObject({
      result: 'completed',
    });
    expect(engine.calls).toBe(0);

    const row = await ctx.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', job.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: 'failed',
      failure_reason: 'processing_error',
      attempts: 4,
    });
    expect(await findJobRecording(ctx.db, job.id)).toBeNull();
    const deliveries = await ctx.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('job_id', '=', job.id)
      .execute();
    expect(deliveries).toHaveLength(1);
    expect(JSON.parse(deliveries[0]!.payload)).toMatchObject({
      status: 'failed',
      failure_reason: 'processing_error',
      request_uuid: job.request_uuid,
    });
    expect(await claimJob(ctx.db, ctx.database.dialect, 'worker-1', 60_000)).toBeUndefined();
  });

  it('a job whose outcome cannot be committed is retried, then failed with processing_error', async () => {
    ctx = await createTestContext({ JOB_MAX_ATTEMPTS: '3' });
    const job = await queueJob(ctx, { externalId: 'twin' });
    // The transaction that records the outcome fails for the first three attempts (as a broken constraint or a lost connection would).
    let commitFailures = 3;
    const db = ctx.deps.database.db;
    const failingDb = new Proxy(db, {
      get(target, property) {
        if (property === 'transaction' && commitFailures > 0) {
          commitFailures -= 1;
          return () => ({ execute: async () => Promise.reject(new Error('commit failed')) });
        }
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const deps = { ...ctx.deps, database: { ...ctx.deps.database, db: failingDb } };
    const engine = fakeAnalyzer();
    const results: string[] = [];
    for (let i = 0; i < 6; i++) {
      await ctx.db
        .updateTable('jobs')
        .set({ run_after: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', job.id)
        .execute();
      const claimed = await claimJob(ctx.db, ctx.database.dialect, 'worker-1', 60_000);
      if (!claimed) break;
      results.push((await processJob(deps, engine, claimed, 'worker-1')).result);
    }
    expect(results).toEqual(['released', 'released', 'released', 'completed']);
    expect(engine.calls).toBe(3);
    const row = await ctx.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', job.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', failure_reason: 'processing_error' });
    expect(
      await ctx.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('job_id', '=', job.id)
        .execute(),
    ).toHaveLength(1);
  });

  it('a delivery past its attempt limit is marked failed without another send', async () => {
    ctx = await createTestContext({ WEBHOOK_RETRY_SCHEDULE: '0.1,0.1', JOB_POLL_MS: '50' });
    const receiver = await startWebhookReceiver();
    try {
      await ctx.db
        .updateTable('organisation_settings')
        .set({ callback_url: receiver.url })
        .where('org_id', '=', ctx.orgA.id)
        .execute();
      const job = await queueJob(ctx, { externalId: 'delivery' });
      const delivery = await insertDelivery(ctx.db, {
        orgId: ctx.orgA.id,
        jobId: job.id,
        webhookId: `msg_${randomUUID()}`,
        eventType: 'enrollment.completed',
        requestUuid: job.request_uuid,
        payload: '{}',
      });
      // Three attempts (1 + 2 retries) were claimed by dispatchers that died before recording an outcome.
      await ctx.db
        .updateTable('webhook_deliveries')
        .set({
          attempts: 3,
          lease_owner: 'dead',
          lease_expires_at: new Date(Date.now() - 1000).toISOString(),
        })
        .where('id', '=', delivery.id)
        .execute();
      const dispatcher = createWebhookDispatcher(ctx.deps);
      dispatcher.start();
      const deadline = Date.now() + 5000;
      let row = delivery;
      while (Date.now() < deadline) {
        row = await ctx.db
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('id', '=', delivery.id)
          .executeTakeFirstOrThrow();
        if (row.status !== 'pending') break;
        await sleep(50);
      }
      await dispatcher.stop();
      expect(row).toMatchObject({
        status: 'failed',
        attempts: 4,
        last_error: 'attempt limit reached without an outcome',
      });
      expect(receiver.calls).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});

describe('engine watchdog', () => {
  it('a stuck inference call degrades the engine: /readyz 503, new tasks refused as retryable, exit after the configured time', async () => {
    const ctx = await createTestContext();
    const { logger, lines } = memoryLogger();
    const exits: number[] = [];
    const stuck = fakeAnalyzer({
      behaviour: (call) => (call === 1 ? new Promise<void>(() => {}) : undefined),
    });
    const watchdog = watchEngine(stuck, {
      stuckAfterMs: 150,
      exitAfterMs: 400,
      checkEveryMs: 25,
      logger,
      exit: (code) => exits.push(code),
    });
    try {
      ctx.deps.engineHealth = watchdog.health;
      const ready = await ctx.app.request('/readyz');
      expect(await ready.json()).toEqual({ status: 'ready', voice: 'available', engine: 'ok' });

      void watchdog.analyzer.enrol(new Uint8Array(0));
      await sleep(300);
      expect(watchdog.health()).toBe('degraded');
      const degraded = await ctx.app.request('/readyz');
      expect(degraded.status).toBe(503);
      expect(await degraded.json()).toEqual({
        status: 'degraded',
        engine: 'degraded',
        voice: 'available',
      });

      const refused = await watchdog.analyzer
        .verify(new Uint8Array(0), { modelId: 'fake-speaker', embedding: new Float32Array(8) })
        .catch((err) => err);
      expect(isEngineError(refused) && refused.category === 'capacity').toBe(true);
      expect(stuck.calls).toBe(1);

      // The job runner stops claiming while degraded.
      await queueJob(ctx, { externalId: 'waits' });
      const runner = createJobRunner(ctx.deps, watchdog.analyzer, 1);
      runner.start();
      await sleep(100);
      await runner.stop();
      expect(
        await ctx.db
          .selectFrom('jobs')
          .select('status')
          .where('external_id', '=', 'waits')
          .executeTakeFirstOrThrow(),
      ).toEqual({ status: 'queued' });

      expect(exits).toEqual([]);
      await sleep(250);
      expect(exits).toEqual([70]);
      expect(
        lines.some(
          (l) =>
            l.level === 60 &&
            /stuck in inference; exiting so the supervisor restarts the process/.test(l.msg),
        ),
      ).toBe(true);
    } finally {
      watchdog.stop();
      await ctx.cleanup();
    }
  });

  it('an engine timeout (the thread did not answer) degrades the engine too', async () => {
    const { logger } = memoryLogger();
    const { EngineError } = await import('@voxkey/engine');
    const timingOut = fakeAnalyzer({
      behaviour: () => {
        throw new EngineError('timeout', 'the task exceeded the 30000 ms limit');
      },
    });
    const watchdog = watchEngine(timingOut, {
      stuckAfterMs: 60_000,
      exitAfterMs: 60_000,
      logger,
      exit: () => {},
    });
    try {
      await expect(watchdog.analyzer.enrol(new Uint8Array(0))).rejects.toMatchObject({
        code: 'timeout',
      });
      expect(watchdog.health()).toBe('degraded');
    } finally {
      watchdog.stop();
    }
  });
});
