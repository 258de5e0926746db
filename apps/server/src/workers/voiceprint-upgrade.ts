import { MAX_VOICEPRINT_SAMPLES } from '@voxkey/contract';
import { UPGRADE_TARGET_SAMPLES } from '@voxkey/engine';
import type { RecordingQuality } from '@voxkey/engine';
import type { Executor } from '../db/connection.js';
import type { AppDeps } from '../deps.js';
import {
  deleteSamples,
  findVoiceprint,
  insertSample,
  listSamples,
  refreshVoiceprintQuality,
  setVoiceprintModel,
} from '../repositories/voiceprints.js';
import { sealEmbedding } from '../security/voiceprints.js';

export interface UpgradeSample {
  modelId: string;
  embedding: Float32Array;
  qualityScore: number;
  recordingQuality?: RecordingQuality | null;
}

/**
 * Inside the completing transaction: adds a passed verification's default-model sample to a voiceprint
 * of an older model. At UPGRADE_TARGET_SAMPLES default-model samples the older samples are deleted and
 * the voiceprint belongs to the default model. False when nothing was stored (the voiceprint is gone,
 * or a concurrent verification already completed the upgrade).
 */
export async function storeUpgradeSample(
  deps: AppDeps,
  trx: Executor,
  orgId: number,
  userId: number,
  sample: UpgradeSample,
): Promise<boolean> {
  const voiceprint = await findVoiceprint(trx, orgId, userId);
  if (!voiceprint) return false;
  const samples = await listSamples(trx, voiceprint.id);
  const older = samples.filter((s) => s.model_id !== sample.modelId);
  const current = samples.length - older.length;
  if (older.length === 0 || current >= UPGRADE_TARGET_SAMPLES) return false;
  // A full voiceprint makes room by dropping its oldest older-model sample.
  if (samples.length >= MAX_VOICEPRINT_SAMPLES)
    await deleteSamples(trx, voiceprint.id, [older[0]!.id]);
  const sealed = sealEmbedding(
    deps.sealer,
    { orgId, userId, modelId: sample.modelId },
    sample.embedding,
  );
  await insertSample(trx, voiceprint, {
    modelId: sample.modelId,
    sealedEmbedding: sealed.sealed,
    sealVersion: sealed.version,
    qualityScore: sample.qualityScore,
    recordingQuality: sample.recordingQuality ?? null,
  });
  if (current + 1 >= UPGRADE_TARGET_SAMPLES) {
    await deleteSamples(
      trx,
      voiceprint.id,
      older.map((s) => s.id),
    );
    await setVoiceprintModel(trx, voiceprint.id, sample.modelId);
  }
  await refreshVoiceprintQuality(trx, voiceprint.id);
  return true;
}
