import type { Executor } from '../db/connection.js';
import type { VoiceprintRow } from '../db/types.js';
import { nowIso } from './clock.js';

export async function insertVoiceprint(
  db: Executor,
  values: { orgId: number; userId: number; modelId: string; sealedEmbedding: string; enrolmentFingerprint: string | null; qualityScore: number },
): Promise<VoiceprintRow> {
  const now = nowIso();
  return db
    .insertInto('voiceprints')
    .values({
      org_id: values.orgId,
      user_id: values.userId,
      model_id: values.modelId,
      sealed_embedding: values.sealedEmbedding,
      enrolment_fingerprint: values.enrolmentFingerprint,
      quality_score: values.qualityScore,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findVoiceprint(db: Executor, orgId: number, userId: number): Promise<VoiceprintRow | undefined> {
  return db.selectFrom('voiceprints').selectAll().where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
}
