import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createEngine,
  UPGRADE_SWITCH_SAMPLES,
  UPGRADE_TARGET_SAMPLES,
  voiceprintModelId,
  type VoiceEngine,
} from '@voxkey/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { voiceprintModels } from '../src/cli/voiceprints.js';
import { claimJob } from '../src/repositories/jobs.js';
import { processJob } from '../src/workers/job-processor.js';
import { TEST_DIALECT } from './support/database.js';
import { useContext, WITHOUT_RATE_LIMITS } from './support/expect.js';
import { orgPath } from './support/fixtures.js';
import type { TestContext } from './support/context.js';

// Issue 24: a speaker-model upgrade locks nobody out. A voiceprint enrolled by the engine of the previous
// release (voxkey-speaker-v3 as the default) keeps verifying after the default becomes voxkey-speaker-v4
// (v3 is bundled for compatibility), gains v4 samples from verified verifications, moves to v4, and an
// impostor's verification never adds a sample. Real bundled models and real recordings.

const AUDIO = fileURLToPath(
  new URL('../../../packages/engine/test/fixtures/audio', import.meta.url),
);
const clip = (name: string) => readFileSync(path.join(AUDIO, name)).toString('base64');
const OLD_MODEL = 'voxkey-speaker-v3';
const NEW_MODEL = 'voxkey-speaker-v4';
// Low enough that v3 (whose default 0.85 refuses many genuine users) verifies this fixture speaker,
// high enough that both models reject the other fixture speaker: the rule keys on `verified`, not on the number.
const MATCH_THRESHOLD = 0.5;

describe(`speaker-model upgrade: older voiceprints keep verifying and move to the default model (${TEST_DIALECT})`, () => {
  const ctx = useContext(WITHOUT_RATE_LIMITS);
  let previousRelease: VoiceEngine;
  let current: VoiceEngine;

  beforeAll(async () => {
    // The fixtures are espeak-ng voices. The default spoof model (a fusion with v4's CNN) is so sure of them that
    // their deepfake_score rounds to 1, which even deepfake_threshold 1 flags; the upgrade path is about speaker
    // models, so these engines use v5's head alone, which scores them below 1.
    const spoofModel = 'voxkey-spoof-v5-lower-int8';
    [previousRelease, current] = await Promise.all([
      createEngine({ speakerModel: OLD_MODEL, spoofModel, threads: 1, warmup: false }),
      createEngine({ spoofModel, threads: 1, warmup: false }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([previousRelease?.close(), current?.close()]);
  });

  async function runJobs(c: TestContext, engine: VoiceEngine) {
    for (;;) {
      const job = await claimJob(c.db, c.database.dialect, 'test-worker', 60_000);
      if (!job) return;
      expect((await processJob(c.deps, engine, job, 'test-worker')).result).toBe('completed');
    }
  }

  async function complete(
    c: TestContext,
    engine: VoiceEngine,
    kind: 'enrollments' | 'verifications',
    body: Record<string, unknown>,
  ) {
    const request_uuid = randomUUID();
    const res = await c.request('POST', orgPath(c.orgA.id, `/${kind}`), {
      body: { request_uuid, ...body },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await runJobs(c, engine);
    const row = await c.db
      .selectFrom('webhook_deliveries')
      .select('payload')
      .where('request_uuid', '=', request_uuid)
      .executeTakeFirstOrThrow();
    const record = await c.request('GET', orgPath(c.orgA.id, `/${kind}/${request_uuid}`));
    return { event: JSON.parse(row.payload), record: record.body };
  }

  const verify = (c: TestContext, externalId: string, audio: string) =>
    complete(c, current, 'verifications', { external_id: externalId, voice_data: audio });

  async function sampleModels(c: TestContext, externalId: string) {
    const rows = await c.db
      .selectFrom('voiceprint_samples')
      .innerJoin('users', 'users.id', 'voiceprint_samples.user_id')
      .select('voiceprint_samples.model_id')
      .where('users.org_id', '=', c.orgA.id)
      .where('users.external_id', '=', externalId)
      .orderBy('voiceprint_samples.id')
      .execute();
    return rows.map((r) => r.model_id);
  }

  async function countsByModel(c: TestContext) {
    const out: string[] = [];
    await voiceprintModels({ org: String(c.orgA.id), json: true }, c.database, c.deps.config, {
      out: (s: string) => out.push(s),
      err: () => undefined,
    } as never);
    return JSON.parse(out.join('')) as {
      default_model: string;
      results: { model: string; voiceprints: number; upgrading: number }[];
    };
  }

  it('a v3 voiceprint verifies with v3, gains v4 samples only from verified genuine recordings, then moves to v4', async () => {
    const c = ctx();
    expect(current.speakerModelId).toBe(NEW_MODEL);
    // The default may be a variant of v4 (its int8 build): voiceprints record the model whose embeddings it shares.
    expect(current.speakerModels.map(voiceprintModelId)).toEqual([NEW_MODEL, OLD_MODEL]);
    const settings = await c.request('PATCH', orgPath(c.orgA.id, '/settings'), {
      // The fixtures are espeak-ng voices, which the spoof model rightly calls synthetic: the deepfake
      // checks are turned off here (the upgrade rule's deepfake condition is tested with the scripted engine).
      body: {
        org_id: c.orgA.id,
        settings: {
          callback_url: 'https://8.8.4.4/hook',
          match_threshold: MATCH_THRESHOLD,
          deepfake_threshold: 1,
          reject_deepfake_enrollments: false,
        },
      },
    });
    expect(settings.status).toBe(200);

    // Enrolled before the upgrade, by the previous release's engine.
    const enrolled = await complete(c, previousRelease, 'enrollments', {
      external_id: 'alice',
      voice_data: clip('alice_1.wav'),
    });
    expect(enrolled.event, JSON.stringify(enrolled.event)).toMatchObject({
      status: 'enrolled',
      models: { speaker: OLD_MODEL },
    });
    expect(await sampleModels(c, 'alice')).toEqual([OLD_MODEL]);
    expect((await countsByModel(c)).results).toEqual([
      { org_id: c.orgA.id, model: OLD_MODEL, voiceprints: 1, upgrading: 1 },
    ]);

    // An impostor is rejected by v3 and adds nothing.
    const impostor = await verify(c, 'alice', clip('bob_1.wav'));
    expect(impostor.event, JSON.stringify(impostor.event)).toMatchObject({
      result: 'rejected',
      voiceprint_upgraded: false,
      models: { speaker: OLD_MODEL },
    });
    expect(impostor.record).toMatchObject({ result: 'rejected', voiceprint_upgraded: false });
    expect(await sampleModels(c, 'alice')).toEqual([OLD_MODEL]);

    // The genuine speaker keeps verifying (scored with v3) and each pass adds a v4 sample.
    const first = await verify(c, 'alice', clip('alice_2.wav'));
    expect(first.event, JSON.stringify(first.event)).toMatchObject({
      result: 'verified',
      voiceprint_upgraded: true,
      models: { speaker: OLD_MODEL },
    });
    expect(first.record).toMatchObject({
      result: 'verified',
      voiceprint_upgraded: true,
      models: { speaker: OLD_MODEL },
    });
    expect(await sampleModels(c, 'alice')).toEqual([OLD_MODEL, NEW_MODEL]);

    const second = await verify(c, 'alice', clip('alice_1_44k_stereo.mp3'));
    expect(second.event, JSON.stringify(second.event)).toMatchObject({
      result: 'verified',
      voiceprint_upgraded: true,
      models: { speaker: OLD_MODEL },
    });
    expect(await sampleModels(c, 'alice')).toEqual([OLD_MODEL, NEW_MODEL, NEW_MODEL]);
    expect(UPGRADE_SWITCH_SAMPLES).toBe(2);
    expect((await countsByModel(c)).results).toEqual([
      { org_id: c.orgA.id, model: NEW_MODEL, voiceprints: 1, upgrading: 1 },
    ]);

    // From two v4 samples on, v4 scores; the impostor is still rejected and adds nothing.
    const impostorAgain = await verify(c, 'alice', clip('bob_1.wav'));
    expect(impostorAgain.event, JSON.stringify(impostorAgain.event)).toMatchObject({
      result: 'rejected',
      voiceprint_upgraded: false,
      models: { speaker: NEW_MODEL },
    });
    expect(await sampleModels(c, 'alice')).toEqual([OLD_MODEL, NEW_MODEL, NEW_MODEL]);

    // The third v4 sample completes the upgrade: the v3 sample is deleted and the voiceprint is v4's.
    const third = await verify(c, 'alice', clip('alice_2.wav'));
    expect(third.event, JSON.stringify(third.event)).toMatchObject({
      result: 'verified',
      voiceprint_upgraded: true,
      models: { speaker: NEW_MODEL },
    });
    expect(await sampleModels(c, 'alice')).toEqual(Array(UPGRADE_TARGET_SAMPLES).fill(NEW_MODEL));
    const voiceprint = await c.db
      .selectFrom('voiceprints')
      .select('model_id')
      .where('org_id', '=', c.orgA.id)
      .executeTakeFirstOrThrow();
    expect(voiceprint.model_id).toBe(NEW_MODEL);
    expect((await countsByModel(c)).results).toEqual([
      { org_id: c.orgA.id, model: NEW_MODEL, voiceprints: 1, upgrading: 0 },
    ]);

    // Nothing more to collect: later verifications add nothing.
    const later = await verify(c, 'alice', clip('alice_2.wav'));
    expect(later.event).toMatchObject({
      result: 'verified',
      voiceprint_upgraded: false,
      models: { speaker: NEW_MODEL },
    });
    expect(await sampleModels(c, 'alice')).toHaveLength(UPGRADE_TARGET_SAMPLES);

    const metrics = await c.deps.observability.metrics.registry.getSingleMetricAsString(
      'voxkey_voiceprint_upgrade_samples_total',
    );
    expect(metrics).toContain(`from_model="${OLD_MODEL}",to_model="${NEW_MODEL}"} 2`);
    expect(metrics).toContain(`from_model="${NEW_MODEL}",to_model="${NEW_MODEL}"} 1`);
  }, 120_000);

  it('add to a v3 voiceprint stores a v4 sample (new enrolments and add use the default model)', async () => {
    const c = ctx(); // settings from the test above
    await complete(c, previousRelease, 'enrollments', {
      external_id: 'carol',
      voice_data: clip('alice_1.wav'),
    });
    const added = await complete(c, current, 'enrollments', {
      external_id: 'carol',
      mode: 'add',
      voice_data: clip('alice_2.wav'),
    });
    expect(added.event).toMatchObject({
      status: 'enrolled',
      mode: 'add',
      samples: 2,
      models: { speaker: NEW_MODEL },
    });
    expect(await sampleModels(c, 'carol')).toEqual([OLD_MODEL, NEW_MODEL]);
    // Issue 31: each sample keeps its recording's measured quality, and the result reports it.
    expect(added.event.recording_quality).toMatchObject({
      bandwidth_hz: expect.any(Number),
      decay_rate_db_per_s: expect.any(Number),
    });
    expect(added.record).toMatchObject({ recording_quality: added.event.recording_quality });
    const stored = await c.db
      .selectFrom('voiceprint_samples')
      .select('recording_quality')
      .where('model_id', '=', NEW_MODEL)
      .execute();
    expect(stored.every((s) => s.recording_quality !== null)).toBe(true);
    // Samples stored before issue 31 have none: they still verify (the calibration's neutral enrolment quality).
    await c.db.updateTable('voiceprint_samples').set({ recording_quality: null }).execute();
    const legacy = await verify(c, 'carol', clip('alice_2.wav'));
    expect(legacy.event, JSON.stringify(legacy.event)).toMatchObject({
      result: 'verified',
      recording_quality: { bandwidth_hz: expect.any(Number) },
    });
    const fresh = await complete(c, current, 'enrollments', {
      external_id: 'dave',
      voice_data: clip('bob_1.wav'),
    });
    expect(fresh.event).toMatchObject({ status: 'enrolled', models: { speaker: NEW_MODEL } });
    expect(await sampleModels(c, 'dave')).toEqual([NEW_MODEL]);
  }, 60_000);
});
