import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { claimJob, findJobRecording } from '../src/repositories/jobs.js';
import { processJob } from '../src/workers/job-processor.js';
import { purgeExpiredRecords } from '../src/workers/retention.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { fakeAnalyzer } from './support/fake-engine.js';
import { issueLiveToken, orgPath, silentWav } from './support/fixtures.js';

const VOICE = silentWav();
const FINGERPRINT = 'fp-phone-7f3a9c';

async function prepare(ctx: TestContext) {
  await ctx.db
    .updateTable('organisation_settings')
    .set({ callback_url: 'https://hooks.example.com/v' })
    .where('org_id', '=', ctx.orgA.id)
    .execute();
  return issueLiveToken(ctx);
}

async function submit(
  ctx: TestContext,
  token: string,
  kind: 'enrollments' | 'verifications',
  externalId: string,
) {
  const requestUuid = randomUUID();
  const res = await ctx.request('POST', orgPath(ctx.orgA.id, `/${kind}`), {
    token,
    body: {
      voice_data: VOICE,
      request_uuid: requestUuid,
      external_id: externalId,
      language: 'en-UK',
      device_fingerprint: FINGERPRINT,
      device_type: 1,
    },
  });
  expect(res.status).toBe(202);
  return requestUuid;
}

async function runQueuedJobs(ctx: TestContext) {
  const engine = fakeAnalyzer();
  for (
    let job = await claimJob(ctx.db, ctx.database.dialect, 'w', 60_000);
    job;
    job = await claimJob(ctx.db, ctx.database.dialect, 'w', 60_000)
  ) {
    expect((await processJob(ctx.deps, engine, job, 'w')).result).toBe('completed');
  }
}

/** Every row of every table that could hold request data, as text. */
async function dump(ctx: TestContext): Promise<string> {
  const tables = ['jobs', 'webhook_deliveries', 'users', 'devices', 'voiceprints'] as const;
  const parts = await Promise.all(tables.map((t) => ctx.db.selectFrom(t).selectAll().execute()));
  return JSON.stringify(parts);
}

describe(`erasure and retention (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  afterEach(() => ctx.cleanup());

  it('deleting a user erases its request records and webhook payloads; their GETs answer 404', async () => {
    ctx = await createTestContext();
    const token = await prepare(ctx);
    const enrolment = await submit(ctx, token, 'enrollments', 'erin');
    await runQueuedJobs(ctx);
    const verification = await submit(ctx, token, 'verifications', 'erin');
    await runQueuedJobs(ctx);
    // One webhook already delivered, the other still pending; one more verification still queued.
    await ctx.db
      .updateTable('webhook_deliveries')
      .set({ status: 'delivered', delivered_at: new Date().toISOString() })
      .where('request_uuid', '=', enrolment)
      .execute();
    // Another user's records are untouched.
    const other = await submit(ctx, token, 'enrollments', 'olga');
    await runQueuedJobs(ctx);
    const queued = await submit(ctx, token, 'verifications', 'erin');

    const before = await ctx.request(
      'GET',
      orgPath(ctx.orgA.id, `/verifications/${verification}`),
      { token },
    );
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ external_id: 'erin', match_score: expect.any(Number) });
    expect(await dump(ctx)).toContain('erin');

    const user = await ctx.db
      .selectFrom('users')
      .select('id')
      .where('external_id', '=', 'erin')
      .executeTakeFirstOrThrow();
    expect(
      (await ctx.request('DELETE', orgPath(ctx.orgA.id, `/users/${user.id}`), { token })).status,
    ).toBe(200);

    for (const [kind, uuid] of [
      ['enrollments', enrolment],
      ['verifications', verification],
      ['verifications', queued],
    ] as const) {
      expect(
        (await ctx.request('GET', orgPath(ctx.orgA.id, `/${kind}/${uuid}`), { token })).status,
      ).toBe(404);
    }
    const text = await dump(ctx);
    expect(text).not.toContain('erin');
    expect(text.match(new RegExp(FINGERPRINT, 'g')) ?? []).toHaveLength(3); // olga's job, device and voiceprint only
    const erased = await ctx.db
      .selectFrom('jobs')
      .selectAll()
      .where('request_uuid', 'in', [enrolment, verification, queued])
      .execute();
    expect(erased).toHaveLength(3);
    for (const job of erased) {
      expect(job).toMatchObject({
        external_id: `erased:${job.id}`,
        device_fingerprint: null,
        user_id: null,
        match_score: null,
        quality_score: null,
        deepfake_score: null,
        result: null,
        phrase_expected: null,
        phrase_transcript: null,
      });
      expect(job.erased_at).not.toBeNull();
      expect(await findJobRecording(ctx.db, job.id)).toBeNull();
    }
    expect(erased.find((j) => j.request_uuid === queued)).toMatchObject({
      status: 'failed',
      failure_reason: 'user_deleted',
    });
    expect(await ctx.db.selectFrom('webhook_deliveries').select('request_uuid').execute()).toEqual([
      { request_uuid: other },
    ]);
    // Nothing is left for a worker to claim or send.
    expect(await claimJob(ctx.db, ctx.database.dialect, 'w', 60_000)).toBeUndefined();
    expect(
      (await ctx.request('GET', orgPath(ctx.orgA.id, `/enrollments/${other}`), { token })).status,
    ).toBe(200);
  });

  it('workers purge finished records after RECORD_RETENTION_DAYS (default 30)', async () => {
    ctx = await createTestContext();
    expect(ctx.config.RECORD_RETENTION_DAYS).toBe(30);
    const token = await prepare(ctx);
    const old = await submit(ctx, token, 'enrollments', 'old-user');
    const recent = await submit(ctx, token, 'enrollments', 'recent-user');
    await runQueuedJobs(ctx);
    const longAgo = new Date(Date.now() - 31 * 86_400_000).toISOString();
    await ctx.db
      .updateTable('jobs')
      .set({ completed_at: longAgo })
      .where('request_uuid', '=', old)
      .execute();
    await ctx.db
      .updateTable('webhook_deliveries')
      .set({ status: 'delivered', updated_at: longAgo })
      .where('request_uuid', '=', old)
      .execute();

    expect(await purgeExpiredRecords(ctx.deps)).toEqual({ jobs: 1, deliveries: 0, challenges: 0 });
    expect(
      (await ctx.request('GET', orgPath(ctx.orgA.id, `/enrollments/${old}`), { token })).status,
    ).toBe(404);
    expect(
      (await ctx.request('GET', orgPath(ctx.orgA.id, `/enrollments/${recent}`), { token })).status,
    ).toBe(200);
    const deliveries = await ctx.db
      .selectFrom('webhook_deliveries')
      .select('request_uuid')
      .execute();
    expect(deliveries).toEqual([{ request_uuid: recent }]);
    const kept = await ctx.db
      .selectFrom('jobs')
      .select(['external_id', 'status', 'kind'])
      .where('request_uuid', '=', old)
      .executeTakeFirstOrThrow();
    // The row stays (anonymous) so metering and invoices still count it.
    expect(kept).toMatchObject({
      status: 'completed',
      kind: 'enrollment',
      external_id: expect.stringMatching(/^erased:/),
    });
    // Idempotent.
    expect(await purgeExpiredRecords(ctx.deps)).toEqual({ jobs: 0, deliveries: 0, challenges: 0 });
    expect(ctx.reportedErrors).toEqual([]);
  });
});
