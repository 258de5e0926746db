import type { Voiceprint } from '@voxkey/engine';
import type { UserRow, VoiceprintRow } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import {
  findUserWithVoiceprintSamples,
  sampleRecordingQuality,
} from '../repositories/voiceprints.js';
import { openEmbedding } from '../security/voiceprints.js';

/** Whom a verification compares with: the user, their voiceprint and its samples, opened. */
export interface VerificationSubject {
  user: UserRow;
  voiceprint: VoiceprintRow;
  /** At least one for an active user; none for a deactivated one, who is refused before any comparison. */
  samples: Voiceprint[];
}

/** The subject of a verification of `externalId`; undefined when the user, their voiceprint or its samples are missing. */
export async function loadVerificationSubject(
  deps: Pick<AppDeps, 'database' | 'sealer'>,
  orgId: number,
  externalId: string,
): Promise<VerificationSubject | undefined> {
  const found = await findUserWithVoiceprintSamples(deps.database.db, orgId, externalId);
  if (!found?.voiceprint || found.samples.length === 0) return undefined;
  const { user, voiceprint, samples: rows } = found;
  // Not opened for a deactivated user: the refusal is user_inactive whatever state the samples are in.
  if (!user.is_active) return { user, voiceprint, samples: [] };
  const samples = rows.map((sample) => ({
    modelId: sample.model_id,
    embedding: openEmbedding(
      deps.sealer,
      { orgId, userId: user.id, modelId: sample.model_id },
      sample.sealed_embedding,
      sample.seal_version,
    ),
    quality: sampleRecordingQuality(sample),
  }));
  return { user, voiceprint, samples };
}
