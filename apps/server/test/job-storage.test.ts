import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimJob, completeJob, findJobRecording, insertJob } from '../src/repositories/jobs.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { jobRequest } from './support/fixtures.js';

const AUDIO = new Uint8Array([1, 2, 3, 4, 5]);

describe(`a job's row and recording (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.cleanup());

  const queue = (externalId: string) =>
    insertJob(
      ctx.db,
      ctx.database.dialect,
      jobRequest({
        orgId: ctx.orgA.id,
        kind: 'verification',
        externalId,
        requestUuid: randomUUID(),
        bodyHash: 'hash',
        audio: AUDIO,
        durationSeconds: 1,
      }),
    );
  const completion = {
    status: 'completed' as const,
    result: 'verified' as const,
    latencyMs: 5,
    completedAt: new Date().toISOString(),
  };
  const webhook = (id: string) => ({
    webhookId: id,
    eventType: 'verification.completed' as const,
    payload: '{"result":"verified"}',
  });
  // as the worker runs it: in a transaction (on PostgreSQL the completion is one statement either way)
  const complete = (jobId: number, owner: string, webhookId: string) =>
    ctx.db
      .transaction()
      .execute((trx) =>
        completeJob(trx, ctx.database.dialect, jobId, owner, completion, webhook(webhookId)),
      );
  const deliveriesOf = (jobId: number) =>
    ctx.db.selectFrom('webhook_deliveries').selectAll().where('job_id', '=', jobId).execute();

  it('is stored with its recording, and completing it drops the recording and queues its webhook', async () => {
    const job = await queue('stored');
    expect(job.status).toBe('queued');
    expect((await findJobRecording(ctx.db, job.id))?.bytes).toEqual(Buffer.from(AUDIO));
    const claimed = await claimJob(ctx.db, ctx.database.dialect, 'worker-1', 60_000);
    expect(claimed?.id).toBe(job.id);
    expect(await complete(job.id, 'worker-1', 'msg_stored')).toBe(true);
    expect(await findJobRecording(ctx.db, job.id)).toBeNull();
    const [delivery, ...others] = await deliveriesOf(job.id);
    expect(others).toEqual([]);
    expect(delivery).toMatchObject({
      org_id: ctx.orgA.id,
      job_id: job.id,
      webhook_id: 'msg_stored',
      event_type: 'verification.completed',
      request_uuid: job.request_uuid,
      payload: '{"result":"verified"}',
      status: 'pending',
      attempts: 0,
      lease_owner: null,
    });
    expect(delivery!.next_attempt_at).toBe(delivery!.created_at);
    const row = await ctx.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', job.id)
      .executeTakeFirstOrThrow();
    expect([row.status, row.result, row.lease_owner]).toEqual(['completed', 'verified', null]);
  });

  it('a worker that lost its lease completes nothing, leaves the recording and queues no webhook', async () => {
    const job = await queue('reclaimed');
    expect((await claimJob(ctx.db, ctx.database.dialect, 'worker-1', 60_000))?.id).toBe(job.id);
    // another worker took the job over (its lease expired)
    await ctx.db
      .updateTable('jobs')
      .set({ lease_owner: 'worker-2' })
      .where('id', '=', job.id)
      .execute();
    expect(await complete(job.id, 'worker-1', 'msg_reclaimed')).toBe(false);
    expect((await findJobRecording(ctx.db, job.id))?.bytes).toEqual(Buffer.from(AUDIO));
    expect(await deliveriesOf(job.id)).toEqual([]);
    const row = await ctx.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', job.id)
      .executeTakeFirstOrThrow();
    expect([row.status, row.lease_owner]).toEqual(['processing', 'worker-2']);
  });
});
