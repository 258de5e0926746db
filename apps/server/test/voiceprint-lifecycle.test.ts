import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, EngineError, type VoiceEngine } from '@voxkey/engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimJob } from '../src/repositories/jobs.js';
import { processJob, type VoiceAnalyzer } from '../src/workers/job-processor.js';
import { TEST_DIALECT } from './support/database.js';
import {
  expectError,
  expectValidation,
  useContext,
  WITHOUT_RATE_LIMITS,
} from './support/expect.js';
import { orgPath, silentWav, wavOf } from './support/fixtures.js';
import type { TestContext } from './support/context.js';

// Issue 14 on the request and job side, with a scripted engine: each recording (a valid WAV, so
// intake accepts it) stands for a speaker embedding, a spoof score or an engine error.

interface Script {
  embedding: number[];
  /** The engine offers this recording's default-model embedding as an upgrade sample (an older-model voiceprint). */
  upgrade?: boolean;
  bonafide?: number;
  error?: string;
  snrDb?: number;
}

const ENGINE_FIXTURES = fileURLToPath(
  new URL('../../../packages/engine/test/fixtures', import.meta.url),
);
const ENGINE_FIXTURE_MODELS = path.join(ENGINE_FIXTURES, 'models');
const ENGINE_FIXTURE_AUDIO = path.join(ENGINE_FIXTURES, 'audio');

const scripts = new Map<string, Script>();
let wavCounter = 0;

/** A distinct 4 s tone: its first sample numbers it, so each recording is a different string. */
function distinctWav(): string {
  const samples = new Float32Array(16000 * 4).map(
    (_, i) => 0.25 * Math.sin((2 * Math.PI * 220 * i) / 16000),
  );
  samples[0] = ++wavCounter / 32768;
  return wavOf(samples);
}

function recording(script: Script): string {
  const audio = distinctWav();
  scripts.set(audio, script);
  return audio;
}

const SPEAKER_A = [1, 0, 0, 0];
const SPEAKER_B = [0, 1, 0, 0];
/** Close to A: cosine 0.8 with A. */
const NEAR_A = [0.8, 0.6, 0, 0];

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
};

function scriptFor(audio: unknown): Script {
  const key =
    typeof audio === 'string' ? audio : Buffer.from(audio as Uint8Array).toString('base64');
  const script = scripts.get(key);
  if (!script) throw new Error('unscripted recording');
  if (script.error) throw new EngineError(script.error as never, `scripted ${script.error}`);
  return script;
}

/** Scores against the mean of the samples (the default rule); match score = cosine. */
const engine = {
  speakerModelId: 'fake-speaker-v1',
  spoofModelId: 'fake-spoof-v1',
  defaultDeepfakeThreshold: 0.5,
  defaultEnrolmentDeepfakeThreshold: 0.75,
  verifyCalls: [] as number[],
  async enrol(audio: unknown) {
    const script = scriptFor(audio);
    return {
      voiceprint: { modelId: 'fake-speaker-v1', embedding: Float32Array.from(script.embedding) },
      qualityScore: 0.9,
      spoof: { bonafideProbability: script.bonafide ?? 0.99, deepfakeDetected: false },
      timings: {},
    };
  },
  async verify(
    audio: unknown,
    voiceprints: Array<{ modelId: string; embedding: Float32Array }>,
    opts: { threshold: number },
  ) {
    const script = scriptFor(audio);
    engine.verifyCalls.push(voiceprints.length);
    const mean = new Float32Array(script.embedding.length);
    for (const v of voiceprints) {
      const norm = Math.hypot(...v.embedding);
      v.embedding.forEach((x, i) => (mean[i]! += x / norm));
    }
    const score = Math.max(0, cosine(script.embedding, mean));
    const reliable = (script.snrDb ?? 30) >= 5;
    return {
      result: reliable ? (score >= opts.threshold ? 'verified' : 'rejected') : 'inconclusive',
      ...(reliable ? {} : { inconclusiveCode: 'low_snr' }),
      matchScore: score,
      bonafideProbability: script.bonafide ?? 0.99,
      speakerModelId: 'fake-speaker-v1',
      qualityScore: 0.8,
      ...(script.upgrade
        ? {
            upgradeSample: {
              modelId: 'fake-speaker-v2',
              embedding: Float32Array.from(script.embedding),
            },
          }
        : {}),
      timings: {},
    };
  },
} as unknown as VoiceAnalyzer & { verifyCalls: number[] };

describe(`voiceprint lifecycle: enrolment modes, deepfake gate, decision settings (${TEST_DIALECT})`, () => {
  const ctx = useContext(WITHOUT_RATE_LIMITS);
  const callback = 'https://8.8.4.4/voxkey-hook';

  const settingsPath = (c: TestContext) => orgPath(c.orgA.id, '/settings');
  const patchSettings = (c: TestContext, settings: Record<string, unknown>) =>
    c.request('PATCH', settingsPath(c), { body: { org_id: c.orgA.id, settings } });

  async function ready(c: TestContext) {
    const res = await patchSettings(c, {
      callback_url: callback,
      match_threshold: null,
      deepfake_threshold: null,
      enrollment_deepfake_threshold: null,
      reject_deepfake_enrollments: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  /** Runs every queued job through the scripted engine. */
  async function runJobs(c: TestContext) {
    for (;;) {
      const job = await claimJob(c.db, c.database.dialect, 'test-worker', 60_000);
      if (!job) return;
      const done = await processJob(c.deps, engine, job, 'test-worker');
      expect(done.result).toBe('completed');
    }
  }

  async function submit(
    c: TestContext,
    kind: 'enrollments' | 'verifications',
    body: Record<string, unknown>,
  ) {
    const request_uuid = randomUUID();
    const res = await c.request('POST', orgPath(c.orgA.id, `/${kind}`), {
      body: { request_uuid, ...body },
    });
    return { res, request_uuid };
  }

  async function webhookFor(c: TestContext, requestUuid: string) {
    const row = await c.db
      .selectFrom('webhook_deliveries')
      .select('payload')
      .where('request_uuid', '=', requestUuid)
      .executeTakeFirstOrThrow();
    return JSON.parse(row.payload);
  }

  /** Submits, processes and returns the webhook payload and the request record. */
  async function complete(
    c: TestContext,
    kind: 'enrollments' | 'verifications',
    body: Record<string, unknown>,
  ) {
    const { res, request_uuid } = await submit(c, kind, body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await runJobs(c);
    const record = await c.request('GET', orgPath(c.orgA.id, `/${kind}/${request_uuid}`));
    expect(record.status).toBe(200);
    return { event: await webhookFor(c, request_uuid), record: record.body };
  }

  const enrol = (c: TestContext, externalId: string, audio: string, mode?: string) =>
    complete(c, 'enrollments', {
      external_id: externalId,
      voice_data: audio,
      ...(mode ? { mode } : {}),
    });
  const verify = (c: TestContext, externalId: string, audio: string) =>
    complete(c, 'verifications', { external_id: externalId, voice_data: audio });

  async function storedSamples(c: TestContext, externalId: string) {
    return c.db
      .selectFrom('voiceprint_samples')
      .innerJoin('users', 'users.id', 'voiceprint_samples.user_id')
      .select([
        'voiceprint_samples.id',
        'voiceprint_samples.model_id',
        'voiceprint_samples.seal_version',
        'voiceprint_samples.sealed_embedding',
      ])
      .where('users.org_id', '=', c.orgA.id)
      .where('users.external_id', '=', externalId)
      .orderBy('voiceprint_samples.id')
      .execute();
  }

  afterEach(() => {
    engine.verifyCalls.length = 0;
  });

  describe('settings', () => {
    it('match_threshold, deepfake_threshold and reject_deepfake_enrollments: defaults, set, back to default with null', async () => {
      const c = ctx();
      await ready(c);
      const initial = await c.request('GET', settingsPath(c));
      expect(initial.body.settings).toMatchObject({
        match_threshold: null,
        deepfake_threshold: null,
        reject_deepfake_enrollments: true,
      });
      const set = await patchSettings(c, {
        match_threshold: 0.7,
        deepfake_threshold: 0.25,
        reject_deepfake_enrollments: false,
      });
      expect(set.status).toBe(200);
      expect(set.body.settings).toMatchObject({
        match_threshold: 0.7,
        deepfake_threshold: 0.25,
        reject_deepfake_enrollments: false,
        callback_url: callback,
      });
      const edges = await patchSettings(c, { match_threshold: 0, deepfake_threshold: 1 });
      expect(edges.body.settings).toMatchObject({
        match_threshold: 0,
        deepfake_threshold: 1,
        reject_deepfake_enrollments: false,
      });
      const reset = await patchSettings(c, { match_threshold: null, deepfake_threshold: null });
      expect(reset.body.settings).toMatchObject({
        match_threshold: null,
        deepfake_threshold: null,
        reject_deepfake_enrollments: false,
      });
      expect((await c.request('GET', settingsPath(c))).body.settings).toEqual(reset.body.settings);
    });

    it('400 on the field for out-of-range or mistyped values, and nothing changes', async () => {
      const c = ctx();
      await ready(c);
      await patchSettings(c, { match_threshold: 0.8 });
      for (const [settings, fields] of [
        [{ match_threshold: 1.01 }, [{ field: 'settings.match_threshold', code: 'out_of_range' }]],
        [{ match_threshold: -0.1 }, [{ field: 'settings.match_threshold', code: 'out_of_range' }]],
        [
          { deepfake_threshold: 2 },
          [{ field: 'settings.deepfake_threshold', code: 'out_of_range' }],
        ],
        [
          { deepfake_threshold: '0.5' },
          [{ field: 'settings.deepfake_threshold', code: 'invalid_type' }],
        ],
        [
          { reject_deepfake_enrollments: 'no' },
          [{ field: 'settings.reject_deepfake_enrollments', code: 'invalid_type' }],
        ],
        [
          { match_threshold: 7, deepfake_threshold: -1 },
          [{ field: 'settings.match_threshold' }, { field: 'settings.deepfake_threshold' }],
        ],
      ] as const) {
        expectValidation(await patchSettings(c, settings), [...fields] as never);
      }
      expect((await c.request('GET', settingsPath(c))).body.settings).toMatchObject({
        match_threshold: 0.8,
        deepfake_threshold: null,
        reject_deepfake_enrollments: true,
      });
    });
  });

  describe('enrolment modes', () => {
    it('new: enrolled with one sample, mode, deepfake_score and models in the webhook and the record', async () => {
      const c = ctx();
      await ready(c);
      const { event, record } = await enrol(
        c,
        'new-user',
        recording({ embedding: SPEAKER_A, bonafide: 0.9 }),
      );
      expect(event).toMatchObject({
        event_type: 'enrollment.completed',
        status: 'enrolled',
        mode: 'new',
        samples: 1,
        deepfake_score: 0.1,
        failure_reason: null,
        models: { speaker: 'fake-speaker-v1', spoof: 'fake-spoof-v1' },
      });
      expect(event.user_id).toEqual(expect.any(Number));
      expect(record).toMatchObject({
        status: 'completed',
        mode: 'new',
        samples: 1,
        deepfake_score: 0.1,
        models: { speaker: 'fake-speaker-v1', spoof: 'fake-spoof-v1' },
        user_id: event.user_id,
      });
      const samples = await storedSamples(c, 'new-user');
      expect(samples).toHaveLength(1);
      expect(samples[0]).toMatchObject({ model_id: 'fake-speaker-v1', seal_version: 2 });
      expect(samples[0]!.sealed_embedding).toMatch(/^v1\./);
      // mode "new" for an enrolled external_id is still 409.
      const again = await submit(c, 'enrollments', {
        external_id: 'new-user',
        voice_data: recording({ embedding: SPEAKER_A }),
      });
      expectError(again.res, 409, undefined, 'already_enrolled');
    });

    it('add to an external_id without a voiceprint is 404 {code, message}', async () => {
      const c = ctx();
      await ready(c);
      const { res } = await submit(c, 'enrollments', {
        external_id: 'nobody',
        mode: 'add',
        voice_data: recording({ embedding: SPEAKER_A }),
      });
      expectError(res, 404, /voiceprint/, 'user_not_enrolled');
      expect(
        await c.db.selectFrom('jobs').select('id').where('external_id', '=', 'nobody').execute(),
      ).toEqual([]);
    });

    it('add: each recording is one more sample, verification compares with all of them; the 11th is 409', async () => {
      const c = ctx();
      await ready(c);
      await enrol(c, 'adder', recording({ embedding: SPEAKER_A }));
      for (let n = 2; n <= 10; n++) {
        const { event, record } = await enrol(
          c,
          'adder',
          recording({ embedding: n % 2 ? SPEAKER_A : NEAR_A }),
          'add',
        );
        expect(event).toMatchObject({ status: 'enrolled', mode: 'add', samples: n });
        expect(record).toMatchObject({ mode: 'add', samples: n });
      }
      expect(await storedSamples(c, 'adder')).toHaveLength(10);
      const { event } = await verify(c, 'adder', recording({ embedding: SPEAKER_A }));
      expect(event.result).toBe('verified');
      expect(engine.verifyCalls).toEqual([10]);

      const eleventh = await submit(c, 'enrollments', {
        external_id: 'adder',
        mode: 'add',
        voice_data: recording({ embedding: SPEAKER_A }),
      });
      expectError(eleventh.res, 409, /maximum of 10/, 'voiceprint_full');
      expect(await storedSamples(c, 'adder')).toHaveLength(10);
    });

    it('add: a failed sample (too little speech, deepfake) leaves the voiceprint as it was', async () => {
      const c = ctx();
      await ready(c);
      await enrol(c, 'keeper', recording({ embedding: SPEAKER_A }));
      await enrol(c, 'keeper', recording({ embedding: SPEAKER_A }), 'add');
      const before = await storedSamples(c, 'keeper');

      const short = await enrol(
        c,
        'keeper',
        recording({ embedding: SPEAKER_B, error: 'insufficient_speech' }),
        'add',
      );
      expect(short.event).toMatchObject({
        status: 'failed',
        mode: 'add',
        failure_reason: 'insufficient_speech',
        samples: 2,
        user_id: null,
      });
      expect(short.record).toMatchObject({
        status: 'failed',
        failure_reason: 'insufficient_speech',
        samples: 2,
      });
      const fake = await enrol(
        c,
        'keeper',
        recording({ embedding: SPEAKER_B, bonafide: 0.05 }),
        'add',
      );
      expect(fake.event).toMatchObject({
        status: 'failed',
        mode: 'add',
        failure_reason: 'deepfake_detected',
        samples: 2,
        deepfake_score: 0.95,
      });

      expect(await storedSamples(c, 'keeper')).toEqual(before);
      expect((await verify(c, 'keeper', recording({ embedding: SPEAKER_A }))).event.result).toBe(
        'verified',
      );
    });

    it('replace keeps the old voiceprint working until the new one is stored, then only the new one counts', async () => {
      const c = ctx();
      await ready(c);
      const first = await enrol(c, 'mover', recording({ embedding: SPEAKER_A }));
      await enrol(c, 'mover', recording({ embedding: SPEAKER_A }), 'add');
      const oldSamples = await storedSamples(c, 'mover');

      // A replacement that fails changes nothing.
      const failed = await enrol(
        c,
        'mover',
        recording({ embedding: SPEAKER_B, error: 'silent_audio' }),
        'replace',
      );
      expect(failed.event).toMatchObject({
        status: 'failed',
        mode: 'replace',
        failure_reason: 'silent_audio',
        samples: 2,
      });
      expect(await storedSamples(c, 'mover')).toEqual(oldSamples);

      // Queued but not yet processed: a verification processed before it still uses the old voiceprint.
      const verification = await submit(c, 'verifications', {
        external_id: 'mover',
        voice_data: recording({ embedding: SPEAKER_A }),
      });
      const replacement = await submit(c, 'enrollments', {
        external_id: 'mover',
        mode: 'replace',
        voice_data: recording({ embedding: SPEAKER_B }),
      });
      expect(verification.res.status).toBe(202);
      expect(replacement.res.status).toBe(202);
      const job = await claimJob(c.db, c.database.dialect, 'test-worker', 60_000);
      expect(job!.request_uuid).toBe(verification.request_uuid);
      await processJob(c.deps, engine, job!, 'test-worker');
      expect((await webhookFor(c, verification.request_uuid)).result).toBe('verified');
      expect(await storedSamples(c, 'mover')).toEqual(oldSamples);

      await runJobs(c);
      const replaced = await webhookFor(c, replacement.request_uuid);
      expect(replaced).toMatchObject({ status: 'enrolled', mode: 'replace', samples: 1 });
      const newSamples = await storedSamples(c, 'mover');
      expect(newSamples).toHaveLength(1);
      expect(oldSamples.map((s) => s.id)).not.toContain(newSamples[0]!.id);
      // Same user, new voice.
      expect(replaced.user_id).toBe(first.event.user_id);
      expect((await verify(c, 'mover', recording({ embedding: SPEAKER_A }))).event.result).toBe(
        'rejected',
      );
      expect((await verify(c, 'mover', recording({ embedding: SPEAKER_B }))).event.result).toBe(
        'verified',
      );
      expect(
        await c.db
          .selectFrom('voiceprints')
          .innerJoin('users', 'users.id', 'voiceprints.user_id')
          .select('voiceprints.id')
          .where('users.external_id', '=', 'mover')
          .execute(),
      ).toHaveLength(1);
    });

    it('replace enrols an external_id that has no user yet', async () => {
      const c = ctx();
      await ready(c);
      const { event } = await enrol(
        c,
        'fresh-replace',
        recording({ embedding: SPEAKER_B }),
        'replace',
      );
      expect(event).toMatchObject({ status: 'enrolled', mode: 'replace', samples: 1 });
      expect(
        (await verify(c, 'fresh-replace', recording({ embedding: SPEAKER_B }))).event.result,
      ).toBe('verified');
    });

    it('mode is validated; replaying a request_uuid with another mode is 409', async () => {
      const c = ctx();
      await ready(c);
      const bad = await submit(c, 'enrollments', {
        external_id: 'x',
        mode: 'merge',
        voice_data: recording({ embedding: SPEAKER_A }),
      });
      expectValidation(bad.res, ['mode']);
      const audio = recording({ embedding: SPEAKER_A });
      const request_uuid = randomUUID();
      const first = await c.request('POST', orgPath(c.orgA.id, '/enrollments'), {
        body: { request_uuid, external_id: 'replayed', voice_data: audio, mode: 'replace' },
      });
      expect(first.status).toBe(202);
      const same = await c.request('POST', orgPath(c.orgA.id, '/enrollments'), {
        body: { request_uuid, external_id: 'replayed', voice_data: audio, mode: 'replace' },
      });
      expect(same.status).toBe(202);
      const other = await c.request('POST', orgPath(c.orgA.id, '/enrollments'), {
        body: { request_uuid, external_id: 'replayed', voice_data: audio, mode: 'new' },
      });
      expectError(other, 409, undefined, 'request_uuid_reused');
      await runJobs(c);
    });

    it('deleting the user erases every sample', async () => {
      const c = ctx();
      await ready(c);
      const { event } = await enrol(c, 'leaver', recording({ embedding: SPEAKER_A }));
      await enrol(c, 'leaver', recording({ embedding: SPEAKER_A }), 'add');
      await enrol(c, 'leaver', recording({ embedding: SPEAKER_A }), 'add');
      expect(
        await c.db
          .selectFrom('voiceprint_samples')
          .select('id')
          .where('user_id', '=', event.user_id)
          .execute(),
      ).toHaveLength(3);
      expect(
        (await c.request('DELETE', orgPath(c.orgA.id, `/users/${event.user_id}`))).status,
      ).toBe(200);
      expect(
        await c.db
          .selectFrom('voiceprint_samples')
          .select('id')
          .where('user_id', '=', event.user_id)
          .execute(),
      ).toEqual([]);
      expect(
        await c.db
          .selectFrom('voiceprints')
          .select('id')
          .where('user_id', '=', event.user_id)
          .execute(),
      ).toEqual([]);
      // Enrolling again starts from nothing.
      expect((await enrol(c, 'leaver', recording({ embedding: SPEAKER_B }))).event).toMatchObject({
        status: 'enrolled',
        samples: 1,
      });
    });
  });

  describe('deepfake gate on enrolment', () => {
    it('a recording judged synthetic fails with deepfake_detected and stores nothing', async () => {
      const c = ctx();
      await ready(c);
      const { event, record } = await enrol(
        c,
        'cloned',
        recording({ embedding: SPEAKER_A, bonafide: 0.2 }),
      );
      expect(event).toMatchObject({
        status: 'failed',
        failure_reason: 'deepfake_detected',
        user_id: null,
        samples: 0,
        deepfake_score: 0.8,
        mode: 'new',
      });
      expect(record).toMatchObject({
        status: 'failed',
        failure_reason: 'deepfake_detected',
        user_id: null,
        deepfake_score: 0.8,
      });
      expect(
        await c.db
          .selectFrom('users')
          .select('id')
          .where('org_id', '=', c.orgA.id)
          .where('external_id', '=', 'cloned')
          .execute(),
      ).toEqual([]);
      expect(await storedSamples(c, 'cloned')).toEqual([]);
      // Nothing was stored, so the same person may enrol again with a real recording.
      expect((await enrol(c, 'cloned', recording({ embedding: SPEAKER_A }))).event.status).toBe(
        'enrolled',
      );
    });

    it('the organisation threshold decides, and reject_deepfake_enrollments: false lets it through', async () => {
      const c = ctx();
      await ready(c);
      const borderline = { embedding: SPEAKER_A, bonafide: 0.7 }; // deepfake_score 0.3
      expect((await enrol(c, 'border-1', recording(borderline))).event.status).toBe('enrolled');
      await patchSettings(c, { enrollment_deepfake_threshold: 0.25 });
      expect((await enrol(c, 'border-2', recording(borderline))).event).toMatchObject({
        status: 'failed',
        failure_reason: 'deepfake_detected',
      });
      await patchSettings(c, { reject_deepfake_enrollments: false });
      expect((await enrol(c, 'border-3', recording(borderline))).event).toMatchObject({
        status: 'enrolled',
        deepfake_score: 0.3,
      });
    });
  });

  describe('enrolment and verification deepfake thresholds (issue 25)', () => {
    it('enrolment has its own, stricter-to-refuse default: a recording flagged on verification can still enrol', async () => {
      const c = ctx();
      await ready(c);
      const doubtful = { embedding: SPEAKER_A, bonafide: 0.4 }; // deepfake_score 0.6: over the verification default 0.5, under the enrolment default 0.75
      const enrolled = await enrol(c, 'doubtful', recording(doubtful));
      expect(enrolled.event).toMatchObject({ status: 'enrolled', deepfake_score: 0.6 });
      expect(enrolled.record).toMatchObject({ status: 'completed', deepfake_threshold: 0.75 });
      const verified = await verify(c, 'doubtful', recording(doubtful));
      expect(verified.event).toMatchObject({
        result: 'verified',
        deepfake_detected: true,
        deepfake_score: 0.6,
        deepfake_threshold: 0.5,
      });

      const settings = await patchSettings(c, { enrollment_deepfake_threshold: 0.55 });
      expect(settings.body.settings).toMatchObject({
        deepfake_threshold: null,
        enrollment_deepfake_threshold: 0.55,
      });
      const refused = await enrol(c, 'doubtful-2', recording(doubtful));
      expect(refused.event).toMatchObject({
        status: 'failed',
        failure_reason: 'deepfake_detected',
        deepfake_score: 0.6,
      });
      expect(refused.record).toMatchObject({ deepfake_threshold: 0.55 });
      // The verification threshold is not affected by the enrolment one.
      expect(
        (await verify(c, 'doubtful', recording({ embedding: SPEAKER_A, bonafide: 0.45 }))).event,
      ).toMatchObject({ deepfake_detected: true, deepfake_threshold: 0.5 });

      const reset = await patchSettings(c, { enrollment_deepfake_threshold: null });
      expect(reset.body.settings.enrollment_deepfake_threshold).toBeNull();
      expect((await enrol(c, 'doubtful-3', recording(doubtful))).event.status).toBe('enrolled');
      expectValidation(await patchSettings(c, { enrollment_deepfake_threshold: 1.5 }), [
        { field: 'settings.enrollment_deepfake_threshold', code: 'out_of_range' },
      ]);
      expectValidation(await patchSettings(c, { enrollment_deepfake_threshold: 'high' }), [
        { field: 'settings.enrollment_deepfake_threshold', code: 'invalid_type' },
      ]);
    });
  });

  describe('speaker-model upgrade samples (issue 24)', () => {
    it('only a verified verification without a deepfake stores the offered sample', async () => {
      const c = ctx();
      await ready(c);
      await enrol(c, 'upgrader', recording({ embedding: SPEAKER_A }));
      const deepfake = await verify(
        c,
        'upgrader',
        recording({ embedding: SPEAKER_A, bonafide: 0.2, upgrade: true }),
      );
      expect(deepfake.event).toMatchObject({
        result: 'verified',
        deepfake_detected: true,
        voiceprint_upgraded: false,
      });
      const impostor = await verify(
        c,
        'upgrader',
        recording({ embedding: SPEAKER_B, upgrade: true }),
      );
      expect(impostor.event).toMatchObject({ result: 'rejected', voiceprint_upgraded: false });
      const inconclusive = await verify(
        c,
        'upgrader',
        recording({ embedding: SPEAKER_A, snrDb: 1, upgrade: true }),
      );
      expect(inconclusive.event).toMatchObject({
        result: 'inconclusive',
        voiceprint_upgraded: false,
      });
      expect((await storedSamples(c, 'upgrader')).map((s) => s.model_id)).toEqual([
        'fake-speaker-v1',
      ]);
      const genuine = await verify(
        c,
        'upgrader',
        recording({ embedding: SPEAKER_A, upgrade: true }),
      );
      expect(genuine.event).toMatchObject({
        result: 'verified',
        deepfake_detected: false,
        voiceprint_upgraded: true,
        models: { speaker: 'fake-speaker-v1' },
      });
      expect(genuine.record).toMatchObject({ voiceprint_upgraded: true });
      const samples = await storedSamples(c, 'upgrader');
      expect(samples.map((s) => s.model_id)).toEqual(['fake-speaker-v1', 'fake-speaker-v2']);
      expect(samples[1]).toMatchObject({ seal_version: 2 });
    });
  });

  describe('verification results and thresholds', () => {
    it('the thresholds applied change the decision for the same recording, and are reported', async () => {
      const c = ctx();
      await ready(c);
      await enrol(c, 'threshold-user', recording({ embedding: SPEAKER_A }));
      const probe = { embedding: NEAR_A, bonafide: 0.7 }; // match 0.8, deepfake 0.3

      const byDefault = await verify(c, 'threshold-user', recording(probe));
      expect(byDefault.event).toMatchObject({
        result: 'rejected',
        match_score: 0.8,
        match_threshold: c.config.MATCH_THRESHOLD,
        deepfake_score: 0.3,
        deepfake_threshold: 0.5,
        deepfake_detected: false,
        failure_reason: null,
        models: { speaker: 'fake-speaker-v1', spoof: 'fake-spoof-v1' },
      });
      expect(byDefault.record).toMatchObject({
        result: 'rejected',
        match_threshold: c.config.MATCH_THRESHOLD,
        deepfake_threshold: 0.5,
        deepfake_score: 0.3,
        mode: null,
        samples: null,
      });

      await patchSettings(c, { match_threshold: 0.75, deepfake_threshold: 0.3 });
      const lenient = await verify(c, 'threshold-user', recording(probe));
      expect(lenient.event).toMatchObject({
        result: 'verified',
        match_score: 0.8,
        match_threshold: 0.75,
        deepfake_detected: true,
        deepfake_threshold: 0.3,
      });
      expect(lenient.record).toMatchObject({
        result: 'verified',
        deepfake_detected: true,
        match_threshold: 0.75,
      });

      await patchSettings(c, { match_threshold: null, deepfake_threshold: null });
      expect((await verify(c, 'threshold-user', recording(probe))).event).toMatchObject({
        result: 'rejected',
        deepfake_detected: false,
      });
    });

    it('failure_reason is the engine code when inconclusive', async () => {
      const c = ctx();
      await ready(c);
      await enrol(c, 'noisy-user', recording({ embedding: SPEAKER_A }));
      const noisy = await verify(c, 'noisy-user', recording({ embedding: SPEAKER_A, snrDb: 1 }));
      expect(noisy.event).toMatchObject({ result: 'inconclusive', failure_reason: 'low_snr' });
      const short = await verify(
        c,
        'noisy-user',
        recording({ embedding: SPEAKER_A, error: 'insufficient_speech' }),
      );
      expect(short.event).toMatchObject({
        result: 'inconclusive',
        failure_reason: 'insufficient_speech',
        deepfake_score: null,
      });
      expect(short.record).toMatchObject({ failure_reason: 'insufficient_speech' });
    });
  });
});

describe(`audio pre-check: POST /organisations/{org_id}/audio-checks (${TEST_DIALECT})`, () => {
  const ctx = useContext({
    RATE_LIMIT_TOKEN_BURST: '3',
    RATE_LIMIT_TOKEN_RPS: '0.001',
    RATE_LIMIT_TRIAL_BURST: '3',
    RATE_LIMIT_TRIAL_RPS: '0.001',
  });
  // The token bucket allows 3 calls: each test uses an organisation (and token) of its own.
  const freshOrg = async (c: TestContext, name: string) => {
    const org = await c.makeOrg(name);
    return { token: org.token, path: orgPath(org.id, '/audio-checks') };
  };
  let realEngine: VoiceEngine | undefined;

  beforeAll(async () => {
    // The real engine (pool, VAD), with the engine package's tiny fixture models.
    realEngine = await createEngine({
      modelsDir: ENGINE_FIXTURE_MODELS,
      threads: 1,
      warmup: false,
    });
  });
  afterAll(() => realEngine?.close());

  const speech = () => readFileSync(path.join(ENGINE_FIXTURE_AUDIO, 'alice_1.wav'));

  it('200 with what the engine sees; problems for a too-short and a silent clip; nothing stored or billed', async () => {
    const c = ctx();
    c.deps.audioChecker = realEngine;
    const jobsBefore = await c.db.selectFrom('jobs').select('id').execute();
    const org = await freshOrg(c, 'Checker');

    const good = await c.request('POST', org.path, {
      token: org.token,
      body: { voice_data: speech().toString('base64') },
    });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect(Object.keys(good.body).sort()).toEqual([
      'clipping_ratio',
      'duration_s',
      'format',
      'net_speech_s',
      'problems',
      'sample_rate',
      'snr_db',
      'usable',
    ]);
    expect(good.body).toMatchObject({
      usable: true,
      format: 'wav',
      sample_rate: 16000,
      problems: [],
    });
    expect(good.body.net_speech_s).toBeGreaterThan(3);

    // The first 1.5 s of the same speech (16-bit mono PCM after a 44-byte header).
    const fixture = speech();
    const pcm = new Int16Array(
      fixture.buffer.slice(fixture.byteOffset + 44, fixture.byteOffset + 44 + 16000 * 2 * 1.5),
    );
    const short = await c.request('POST', org.path, {
      token: org.token,
      body: { voice_data: wavOf(Float32Array.from(pcm, (x) => x / 32768)) },
    });
    expect(short.status).toBe(200);
    expect(short.body.usable).toBe(false);
    expect(short.body.problems.map((p: { code: string }) => p.code)).toEqual([
      'audio_too_short',
      'insufficient_speech',
    ]);
    expect(short.body.duration_s).toBeCloseTo(1.5, 2);

    const silent = await c.request('POST', org.path, {
      token: org.token,
      body: { voice_data: silentWav() },
    });
    expect(silent.status).toBe(200);
    expect(silent.body).toMatchObject({
      usable: false,
      net_speech_s: 0,
      snr_db: null,
      clipping_ratio: 0,
    });
    expect(silent.body.problems.map((p: { code: string }) => p.code)).toEqual([
      'silent_audio',
      'insufficient_speech',
    ]);
    for (const p of silent.body.problems)
      expect(Object.keys(p).sort()).toEqual(['code', 'message']);

    expect(await c.db.selectFrom('jobs').select('id').execute()).toEqual(jobsBefore);
  });

  it('bad base64 or a file that is not audio is a 400 on voice_data; voice_data is required', async () => {
    const c = ctx();
    c.deps.audioChecker = realEngine;
    const a = await freshOrg(c, 'Checker400a');
    for (const [voice_data, code] of [
      ['%%% not base64 %%%', 'invalid_base64'],
      [
        Buffer.from('just some text, not a recording').toString('base64'),
        'unsupported_audio_format',
      ],
    ] as const) {
      expectValidation(await c.request('POST', a.path, { token: a.token, body: { voice_data } }), [
        { field: 'voice_data', code },
      ] as never);
    }
    const b = await freshOrg(c, 'Checker400b');
    expectValidation(await c.request('POST', b.path, { token: b.token, body: {} }), ['voice_data']);
    expectValidation(
      await c.request('POST', b.path, {
        token: b.token,
        body: { voice_data: silentWav(1), extra: 1 },
      }),
      ['extra'],
    );
  });

  it('503 without an engine or when the check cannot finish in time; another organisation is 403', async () => {
    const c = ctx();
    const org = await freshOrg(c, 'NoEngine');
    const body = { voice_data: silentWav() };
    c.deps.audioChecker = undefined;
    expectError(
      await c.request('POST', org.path, { token: org.token, body }),
      503,
      undefined,
      'unavailable',
    );
    c.deps.audioChecker = {
      checkAudio: async () =>
        Promise.reject(new EngineError('timeout', 'the task exceeded the limit')),
    };
    const slow = await c.request('POST', org.path, { token: org.token, body });
    expectError(slow, 503, /longer than/, 'unavailable');
    expect(slow.headers.get('retry-after')).toBe('1');
    expectError(
      await c.request('POST', orgPath(c.orgB.id, '/audio-checks'), { token: org.token, body }),
      403,
    );
  });

  it('is rate-limited like every call (429 with Retry-After)', async () => {
    const c = ctx();
    c.deps.audioChecker = realEngine;
    const org = await freshOrg(c, 'Limited');
    const body = { voice_data: silentWav() };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await c.request('POST', org.path, { token: org.token, body });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
