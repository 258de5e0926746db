import { randomUUID } from 'node:crypto';
import { encodeWav } from '@voxkey/engine/dsp';
import type { Insertable } from 'kysely';
import type { JobKind, JobsTable } from '../../src/db/types.js';
import type { NewJob } from '../../src/repositories/jobs.js';
import { insertUser, upsertDevice } from '../../src/repositories/users.js';
import { insertSample, insertVoiceprint } from '../../src/repositories/voiceprints.js';
import { sealEmbedding } from '../../src/security/voiceprints.js';
import { issueToken } from '../../src/services/organisations.js';
import type { TestContext } from './context.js';

/** A live token of the organisation (trial tokens stay capped by the Sandbox allowance on any plan). */
export async function issueLiveToken(ctx: Pick<TestContext, 'db' | 'orgA'>, orgId = ctx.orgA.id) {
  return (await issueToken(ctx.db, { orgId, friendlyName: 'live', kind: 'live' })).bearer;
}

/** Rows that have no create endpoint (users, devices, invoices) go straight into the database. */

export async function seedUser(ctx: TestContext, orgId: number, externalId: string) {
  return insertUser(ctx.db, orgId, externalId);
}

/** A user with a one-sample voiceprint of the fake engines' model (they ignore its embedding). */
export async function seedEnrolledUser(ctx: TestContext, orgId: number, externalId: string) {
  const user = await seedUser(ctx, orgId, externalId);
  const voiceprint = await insertVoiceprint(ctx.db, {
    orgId,
    userId: user.id,
    modelId: 'fake-speaker',
    enrolmentFingerprint: null,
    qualityScore: 0.9,
  });
  const sealed = sealEmbedding(
    ctx.deps.sealer,
    { orgId, userId: user.id, modelId: 'fake-speaker' },
    new Float32Array(8).fill(0.5),
  );
  await insertSample(ctx.db, voiceprint, {
    modelId: 'fake-speaker',
    sealedEmbedding: sealed.sealed,
    sealVersion: sealed.version,
    qualityScore: 0.9,
  });
  return user;
}

/** What insertJob stores for a request without a device or a phrase, its recording `audio` said to be a WAV of `durationSeconds`. */
export function jobRequest(values: {
  orgId: number;
  kind: JobKind;
  externalId: string;
  requestUuid: string;
  bodyHash: string;
  audio: Uint8Array;
  durationSeconds: number;
}): NewJob {
  const { audio, durationSeconds, ...identity } = values;
  return {
    ...identity,
    language: 'en-UK',
    deviceFingerprint: null,
    deviceType: null,
    phrase: null,
    recording: {
      bytes: audio,
      info: { format: 'wav', sampleRate: 16000, channels: 1, durationSeconds, bytes: audio.length },
    },
  };
}

export async function seedDevice(
  ctx: TestContext,
  values: { orgId: number; userId: number; fingerprint?: string; type?: number; usedAt?: string },
) {
  return upsertDevice(ctx.db, {
    orgId: values.orgId,
    userId: values.userId,
    fingerprint: values.fingerprint ?? `fp-${randomUUID()}`,
    type: values.type ?? 1,
    usedAt: values.usedAt ?? new Date().toISOString(),
  });
}

/** A job row as a finished request leaves it (a completed verification, now) unless `values` says otherwise. */
export async function seedJob(
  ctx: TestContext,
  values: Pick<Insertable<JobsTable>, 'org_id'> & Partial<Insertable<JobsTable>>,
) {
  const [job] = await seedJobs(ctx, 1, values);
  return job!;
}

/** `count` such rows in one insert, e.g. to use up a monthly quota. */
export async function seedJobs(
  ctx: TestContext,
  count: number,
  values: Pick<Insertable<JobsTable>, 'org_id'> & Partial<Insertable<JobsTable>>,
) {
  const now = new Date().toISOString();
  const rows = Array.from({ length: count }, () => ({
    kind: 'verification' as const,
    request_uuid: randomUUID(),
    body_hash: 'x',
    external_id: 'seeded',
    language: 'en-UK',
    status: 'completed' as const,
    attempts: 1,
    run_after: now,
    created_at: now,
    updated_at: now,
    ...values,
  }));
  return ctx.db.insertInto('jobs').values(rows).returningAll().execute();
}

/** A seeded job's recording (stored beside the job, as insertJob stores it). */
export async function seedJobRecording(ctx: TestContext, jobId: number, audio: Uint8Array) {
  await ctx.db
    .insertInto('job_recordings')
    .values({ job_id: jobId, audio: Buffer.from(audio), audio_info: null })
    .execute();
}

export async function moveToPlan(ctx: TestContext, orgId: number, planName: string) {
  const plan = await ctx.db
    .selectFrom('plans')
    .select('id')
    .where('name', '=', planName)
    .executeTakeFirstOrThrow();
  await ctx.db
    .updateTable('subscriptions')
    .set({ plan_id: plan.id })
    .where('org_id', '=', orgId)
    .execute();
}

let invoiceSeq = 0;
export async function seedInvoice(
  ctx: TestContext,
  values: {
    orgId: number;
    subId: number;
    sequence?: number;
    period?: string;
    monthlyVerifications?: number;
    overageCalls?: number;
    fileRef?: string;
  },
) {
  invoiceSeq += 1;
  const now = new Date().toISOString();
  const sequence = values.sequence ?? invoiceSeq;
  return ctx.db
    .insertInto('invoices')
    .values({
      org_id: values.orgId,
      sub_id: values.subId,
      invoice_sequence: sequence,
      period: values.period ?? `2026-${String((sequence % 12) + 1).padStart(2, '0')}`,
      monthly_verifications: values.monthlyVerifications ?? 1234,
      overage_calls: values.overageCalls ?? 56,
      amount_gbp: 12.5,
      file_ref: values.fileRef ?? `invoices/${values.orgId}/2026-${sequence}.json`,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets `updated_at`/`created_at` of a row so time filters and sorts can be tested deterministically. */
export async function setTimestamps(
  ctx: TestContext,
  table: 'users' | 'api_tokens' | 'predefined_texts' | 'plans',
  id: number,
  createdAt: string,
  updatedAt = createdAt,
) {
  await ctx.db
    .updateTable(table)
    .set({ created_at: createdAt, updated_at: updatedAt })
    .where('id', '=', id)
    .execute();
}

export function orgPath(orgId: number, rest = ''): string {
  return `/v1/organisations/${orgId}${rest}`;
}

export async function createText(
  ctx: TestContext,
  values: { language: string; text_code: number; text?: string },
  options: { orgId?: number; token?: string } = {},
) {
  const orgId = options.orgId ?? ctx.orgA.id;
  const res = await ctx.request('POST', orgPath(orgId, '/predefined-texts'), {
    token: options.token ?? (orgId === ctx.orgB.id ? ctx.orgB.token : ctx.orgA.token),
    body: { org_id: orgId, text: `Say ${values.language} ${values.text_code}`, ...values },
  });
  if (res.status !== 201) throw new Error(`createText: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Within any trial: a token the (expiring) trial token creates must expire no later than it. */
export const inADay = () => new Date(Date.now() + 86_400_000).toISOString();

/**
 * Creates a token through the API, by default with the organisation's trial token; so it expires
 * in a day unless `values` says otherwise (without expires_at the trial token's request is a 400).
 */
export async function createToken(
  ctx: TestContext,
  values: { friendly_name?: string; enabled?: boolean; expires_at?: string } = {},
  options: { orgId?: number; token?: string } = {},
): Promise<{ bearer: string; token: any }> {
  const orgId = options.orgId ?? ctx.orgA.id;
  const res = await ctx.request('POST', orgPath(orgId, '/api-tokens'), {
    token: options.token ?? (orgId === ctx.orgB.id ? ctx.orgB.token : ctx.orgA.token),
    body: {
      friendly_name: values.friendly_name ?? `svc-${randomUUID().slice(0, 8)}`,
      enabled: values.enabled ?? true,
      expires_at: inADay(),
      ...values,
    },
  });
  if (res.status !== 201) throw new Error(`createToken: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const UNKNOWN_ID = 987654;

/** A 16-bit mono WAV of `samples` (floats in -1..1), base64 as `voice_data` carries it. */
export function wavOf(samples: Float32Array, sampleRate = 16000): string {
  return Buffer.from(encodeWav(samples, sampleRate)).toString('base64');
}

/** Silence as a mono WAV (base64): passes intake checks; for tests whose engine does not listen. */
export function silentWav(seconds = 4, sampleRate = 16000): string {
  return wavOf(new Float32Array(Math.round(seconds * sampleRate)), sampleRate);
}
