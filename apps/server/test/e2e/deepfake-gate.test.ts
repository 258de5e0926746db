import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../support/database.js';
import {
  DATASET_DIR,
  datasetPresentFor,
  losslessRecordings,
  type LosslessRecording,
} from '../support/recordings.js';
import {
  callApi,
  createServerEnvironment,
  REPO_MODELS,
  runCli,
  type ServerEnvironment,
  type ServerProcess,
  startServerProcess,
} from '../support/server-process.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

interface ManifestModel {
  name: string;
  kind: string;
  default?: boolean;
  defaultThreshold?: number;
  enrolmentThreshold?: number;
}
const manifest = JSON.parse(
  readFileSync(new URL('../../../../models/manifest.json', import.meta.url), 'utf8'),
) as { models: ManifestModel[] };
const defaultSpoof = manifest.models.find((m) => m.kind === 'spoof' && m.default)!;
/**
 * A dev spoof (VoiceLoop text-to-speech, 6.7 s of speech) that the default model scores far below both of
 * its thresholds (logit -20.6 against -2.8 and -3.5, `npm run eval` of 2026-11-30), so that no CPU's
 * kernels move it across one.
 */
const SPOOF_CLIP = 'speech/voiceloop-vctk/p339/voiceloop-the-achievement-p339.mp3';

// The deepfake gate on real speech as apps send it: lossless WAV as recorded, and the same utterances as MP3.
describe.skipIf(
  !datasetPresentFor(import.meta.url, 'deepfake gate on lossless and MP3 recordings'),
)(`deepfake gate on real lossless and MP3 recordings (${TEST_DIALECT})`, () => {
  let environment: ServerEnvironment;
  let server: ServerProcess;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let org: { id: number; token: string };
  let recordings: LosslessRecording[];

  const api = (method: string, path: string, body?: unknown) =>
    callApi(server.baseUrl, org.token, method, `/organisations/${org.id}${path}`, body);
  const submit = async (
    resource: 'enrollments' | 'verifications',
    audio: Uint8Array,
    extra: Record<string, unknown> = {},
  ) => {
    const requestUuid = randomUUID();
    const accepted = await api('POST', `/${resource}`, {
      voice_data: Buffer.from(audio).toString('base64'),
      request_uuid: requestUuid,
      external_id: 'lossless-speaker',
      ...extra,
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const calls = await receiver.waitFor((all) =>
      all.some((c) => c.body.request_uuid === requestUuid),
    );
    return calls.find((c) => c.body.request_uuid === requestUuid)!.body;
  };

  beforeAll(async () => {
    recordings = await losslessRecordings(3);
    receiver = await startWebhookReceiver();
    environment = await createServerEnvironment({ VOXKEY_MODELS_DIR: REPO_MODELS });
    const created = await runCli(environment, [
      'org',
      'create',
      '--name',
      'Deepfake gate',
      '--email',
      'gate@example.com',
      '--callback-url',
      receiver.url,
    ]);
    org = { id: created.organisation.id, token: created.token.bearer };
    server = await startServerProcess(environment);
  });

  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    await environment?.cleanup();
  });

  it("enrols a real speaker from a lossless WAV recording (the enrolment gate, at the model's own enrolment threshold, does not refuse it)", async () => {
    const result = await submit('enrollments', recordings[0]!.wav);
    expect(result).toMatchObject({
      status: 'enrolled',
      failure_reason: null,
      models: { spoof: defaultSpoof.name },
    });
    const record = await api('GET', `/enrollments/${result.request_uuid}`);
    expect(record.body.deepfake_threshold).toBeCloseTo(1 - defaultSpoof.enrolmentThreshold!, 6);
    expect(record.body.deepfake_score).toBeLessThan(record.body.deepfake_threshold);
  });

  it('enrols a real speaker from an MP3 recording too', async () => {
    const result = await submit('enrollments', recordings[0]!.mp3, {
      external_id: 'lossless-speaker-mp3',
    });
    expect(result).toMatchObject({ status: 'enrolled', failure_reason: null });
  });

  it('flags a synthetic recording as WAV and as MP3, and refuses to enrol it', async () => {
    const { decodeAudio, encodeWav } = await import('@voxkey/engine/dsp');
    const mp3 = new Uint8Array(readFileSync(path.join(DATASET_DIR, SPOOF_CLIP)));
    const wav = encodeWav((await decodeAudio(mp3)).samples, 16_000);
    for (const audio of [wav, mp3]) {
      const verified = await submit('verifications', audio);
      expect(verified.deepfake_detected, JSON.stringify(verified)).toBe(true);
      expect(verified.deepfake_score).toBeGreaterThanOrEqual(verified.deepfake_threshold);
    }
    for (const audio of [wav, mp3]) {
      const enrolled = await submit('enrollments', audio, { external_id: 'cloned-voice' });
      expect(enrolled, JSON.stringify(enrolled)).toMatchObject({
        status: 'failed',
        failure_reason: 'deepfake_detected',
        user_id: null,
      });
      const record = await api('GET', `/enrollments/${enrolled.request_uuid}`);
      expect(record.body.deepfake_threshold).toBeCloseTo(1 - defaultSpoof.enrolmentThreshold!, 6);
      expect(enrolled.deepfake_score).toBeGreaterThanOrEqual(record.body.deepfake_threshold);
    }
  });

  it('verifies the same utterance as lossless WAV and as MP3 alike: real in both, with the default model thresholds', async () => {
    for (const recording of recordings.slice(1)) {
      const asWav = await submit('verifications', recording.wav);
      const asMp3 = await submit('verifications', recording.mp3);
      for (const result of [asWav, asMp3]) {
        expect(result.deepfake_detected).toBe(false);
        expect(result.models.spoof).toBe(defaultSpoof.name);
        expect(result.deepfake_threshold).toBeCloseTo(1 - defaultSpoof.defaultThreshold!, 6);
      }
      expect(asWav.result).toBe('verified');
      expect(asMp3.result).toBe('verified');
    }
  });

  it("keeps an organisation's explicit deepfake threshold over the model's default", async () => {
    const patched = await api('PATCH', '/settings', {
      org_id: org.id,
      settings: { deepfake_threshold: 0.97 },
    });
    expect(patched.status).toBe(200);
    const result = await submit('verifications', recordings[1]!.wav);
    expect(result.deepfake_threshold).toBe(0.97);
  });
});
