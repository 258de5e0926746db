import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { claimJob } from '../src/repositories/jobs.js';
import { setUserActive } from '../src/repositories/users.js';
import { sealRecording } from '../src/security/recordings.js';
import { processJob } from '../src/workers/job-processor.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { fakeAnalyzer } from './support/fake-engine.js';
import { seedEnrolledUser, seedJob, seedJobRecording, silentWav } from './support/fixtures.js';

/** Queues one job (its sealed recording when asked), claims it as worker-1, then runs it with a fake engine. */
async function runJob(
  ctx: TestContext,
  kind: 'enrollment' | 'verification',
  externalId: string,
  options: {
    withRecording: boolean;
    deviceFingerprint?: string;
    leaseLost?: boolean;
    upgradeSample?: boolean;
  },
) {
  const requestUuid = randomUUID();
  const job = await seedJob(ctx, {
    org_id: ctx.orgA.id,
    kind,
    request_uuid: requestUuid,
    external_id: externalId,
    status: 'queued',
    attempts: 0,
    device_fingerprint: options.deviceFingerprint ?? null,
  });
  if (options.withRecording) {
    const audio = Buffer.from(silentWav(), 'base64');
    await seedJobRecording(
      ctx,
      job.id,
      sealRecording(ctx.deps.sealer, ctx.orgA.id, requestUuid, audio),
    );
  }
  const claimed = await claimJob(ctx.db, ctx.database.dialect, 'worker-1', 60_000);
  expect(claimed?.id).toBe(job.id);
  if (options.leaseLost) {
    // another worker took the job over while this one analysed it
    await ctx.db
      .updateTable('jobs')
      .set({ lease_owner: 'worker-2' })
      .where('id', '=', job.id)
      .execute();
  }
  const engine = fakeAnalyzer({ upgradeSample: options.upgradeSample });
  const processed = await processJob(ctx.deps, engine, claimed!, 'worker-1');
  const row = await ctx.db
    .selectFrom('jobs')
    .select(['status', 'result', 'failure_reason'])
    .where('id', '=', job.id)
    .executeTakeFirstOrThrow();
  const deliveries = await ctx.db
    .selectFrom('webhook_deliveries')
    .select('event_type')
    .where('job_id', '=', job.id)
    .execute();
  return { processed, engineCalls: engine.calls, row, deliveries };
}

// When a verification's job runs, its user, voiceprint or recording may be gone: each case is decided without the
// engine where it can be, and the recording is read only for a subject that can be verified.
describe(`a verification's worker-side reads (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  afterEach(() => ctx.cleanup());

  const enrolled = (externalId: string) => seedEnrolledUser(ctx, ctx.orgA.id, externalId);
  const verify = (
    externalId: string,
    withRecording: boolean,
    options: { deviceFingerprint?: string; leaseLost?: boolean; upgradeSample?: boolean } = {},
  ) => runJob(ctx, 'verification', externalId, { withRecording, ...options });

  const devicesOf = (fingerprint: string) =>
    ctx.db.selectFrom('devices').select('user_id').where('fingerprint', '=', fingerprint).execute();

  it('an enrolled user and the recording: the engine decides', async () => {
    ctx = await createTestContext();
    await enrolled('present');
    const { processed, engineCalls, row } = await verify('present', true);
    expect(processed).toMatchObject({ result: 'completed' });
    expect(engineCalls).toBe(1);
    expect(row).toEqual({ status: 'completed', result: 'verified', failure_reason: null });
  });

  it("a verification's completion queues its webhook and records the device; with the lease lost, neither", async () => {
    ctx = await createTestContext();
    const user = await enrolled('travels');
    const held = await verify('travels', true, { deviceFingerprint: 'phone-1' });
    expect(held.processed).toMatchObject({ result: 'completed' });
    expect(held.deliveries).toEqual([{ event_type: 'verification.completed' }]);
    expect(await devicesOf('phone-1')).toEqual([{ user_id: user.id }]);

    // the device is written before the completion finds the lease gone: the transaction undoes it
    const lost = await verify('travels', true, { deviceFingerprint: 'phone-2', leaseLost: true });
    expect(lost.processed).toEqual({ result: 'lost' });
    expect(lost.engineCalls).toBe(1);
    expect(lost.row.status).toBe('processing');
    expect(lost.deliveries).toEqual([]);
    expect(await devicesOf('phone-2')).toEqual([]);
  });

  it("a verification that upgrades the voiceprint stores the newer model's sample; with the lease lost, nothing", async () => {
    ctx = await createTestContext();
    const user = await enrolled('upgrading');
    const sampleModels = async () =>
      (
        await ctx.db
          .selectFrom('voiceprint_samples')
          .select('model_id')
          .where('user_id', '=', user.id)
          .orderBy('id')
          .execute()
      ).map((row) => row.model_id);

    // the sample is written before the completion finds the lease gone: the transaction undoes it
    // (SQLite always completes in a transaction; the PostgreSQL run is the one that fails if the
    // completion takes its one-statement path for an upgrade)
    const lost = await verify('upgrading', true, { upgradeSample: true, leaseLost: true });
    expect(lost.processed).toEqual({ result: 'lost' });
    expect(lost.deliveries).toEqual([]);
    expect(await sampleModels()).toEqual(['fake-speaker']);

    const held = await verify('upgrading', true, { upgradeSample: true });
    expect(held.processed).toMatchObject({ result: 'completed' });
    expect(held.deliveries).toEqual([{ event_type: 'verification.completed' }]);
    expect(await sampleModels()).toEqual(['fake-speaker', 'fake-speaker-next']);
  });

  it('a user deleted after the request was accepted: user_not_found, whether or not the recording is still there', async () => {
    ctx = await createTestContext();
    for (const withRecording of [true, false]) {
      const { processed, engineCalls, row } = await verify('nobody', withRecording);
      expect(processed).toMatchObject({ result: 'completed' });
      expect(engineCalls).toBe(0);
      expect(row).toEqual({
        status: 'completed',
        result: 'rejected',
        failure_reason: 'user_not_found',
      });
    }
  });

  it('a deactivated user: user_inactive, without the recording', async () => {
    ctx = await createTestContext();
    const user = await enrolled('sleeper');
    await setUserActive(ctx.db, ctx.orgA.id, user.id, false);
    const { engineCalls, row } = await verify('sleeper', false);
    expect(engineCalls).toBe(0);
    expect(row).toEqual({
      status: 'completed',
      result: 'rejected',
      failure_reason: 'user_inactive',
    });
  });

  it('an enrolled user whose recording is gone: the job is left to what ended it, no engine call', async () => {
    ctx = await createTestContext();
    await enrolled('erased');
    const { processed, engineCalls, row } = await verify('erased', false);
    expect(processed).toEqual({ result: 'lost' });
    expect(engineCalls).toBe(0);
    expect(row.status).toBe('processing');
  });
});

describe(`an enrolment whose lease was lost (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  afterEach(() => ctx.cleanup());

  it('stores no user, voiceprint or webhook: its writes are undone with the completion', async () => {
    ctx = await createTestContext();
    const { processed, engineCalls, deliveries } = await runJob(ctx, 'enrollment', 'newcomer', {
      withRecording: true,
      leaseLost: true,
    });
    expect(processed).toEqual({ result: 'lost' });
    expect(engineCalls).toBe(1);
    const users = await ctx.db
      .selectFrom('users')
      .select('id')
      .where('external_id', '=', 'newcomer')
      .execute();
    expect(users).toEqual([]);
    expect(await ctx.db.selectFrom('voiceprints').select('id').execute()).toEqual([]);
    expect(deliveries).toEqual([]);
  });
});
