import type { Voiceprint } from '@voxkey/engine';
import type { AppDeps } from '../deps.js';
import { findSettings } from '../repositories/organisations.js';
import { findUserByExternalId } from '../repositories/users.js';
import { findVoiceprint, listSamples, sampleRecordingQuality } from '../repositories/voiceprints.js';
import { openEmbedding } from '../security/voiceprints.js';

/** What a stream's early-decision probes compare with: the user's samples and the threshold their job will apply. */
export interface StreamSubject {
  voiceprints: Voiceprint[];
  matchThreshold: number;
}

/** Loaded once at `start`; undefined when there is nothing to compare with (the job then decides, as for a posted request). */
export async function loadStreamSubject(deps: AppDeps, orgId: number, externalId: string): Promise<StreamSubject | undefined> {
  const db = deps.database.db;
  const user = await findUserByExternalId(db, orgId, externalId);
  const voiceprint = user ? await findVoiceprint(db, orgId, user.id) : undefined;
  if (!user || !voiceprint) return undefined;
  const samples = await listSamples(db, voiceprint.id);
  if (samples.length === 0) return undefined;
  const settings = await findSettings(db, orgId);
  return {
    voiceprints: samples.map((sample) => ({
      modelId: sample.model_id,
      embedding: openEmbedding(deps.sealer, { orgId, userId: user.id, modelId: sample.model_id }, sample.sealed_embedding, sample.seal_version),
      quality: sampleRecordingQuality(sample),
    })),
    matchThreshold: settings?.match_threshold ?? deps.config.MATCH_THRESHOLD,
  };
}
