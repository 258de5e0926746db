import type {
  createAudioCheck,
  createEnrollment,
  createVerification,
  getEnrollment,
  getVerification,
} from '@voxkey/contract';
import type { Executor } from '../../db/connection.js';
import type { JobKind } from '../../db/types.js';
import { ApiError } from '../../errors.js';
import type { AppRouteHandler } from '../../http/types.js';
import { findJobByRequest, toRequestRecord } from '../../repositories/jobs.js';
import { checkRecording } from '../../services/audio-checks.js';
import { acceptVoiceRequest } from '../../services/voice-requests.js';

const location = (orgId: number, kind: JobKind, requestUuid: string) =>
  `/v1/organisations/${orgId}/${kind === 'enrollment' ? 'enrollments' : 'verifications'}/${requestUuid}`;

export const enrol: AppRouteHandler<typeof createEnrollment> = async (c) => {
  const body = c.req.valid('json');
  const accepted = await acceptVoiceRequest(c.get('deps'), c.get('auth'), 'enrollment', body);
  c.header('Location', location(c.get('auth').orgId, 'enrollment', body.request_uuid));
  return c.json(accepted, 202);
};

export const verify: AppRouteHandler<typeof createVerification> = async (c) => {
  const body = c.req.valid('json');
  const accepted = await acceptVoiceRequest(c.get('deps'), c.get('auth'), 'verification', body);
  c.header('Location', location(c.get('auth').orgId, 'verification', body.request_uuid));
  return c.json(accepted, 202);
};

async function readRecord(db: Executor, orgId: number, kind: JobKind, requestUuid: string) {
  // Stored as the caller sent it; a lower-case spelling of the same UUID finds it too.
  const job =
    (await findJobByRequest(db, orgId, requestUuid)) ??
    (await findJobByRequest(db, orgId, requestUuid.toLowerCase()));
  // An erased record (user deleted, or past the retention period) is gone as far as the API is concerned.
  if (!job || job.kind !== kind || job.erased_at !== null)
    throw ApiError.notFound(kind === 'enrollment' ? 'Enrolment request' : 'Verification request');
  return toRequestRecord(job);
}

export const enrolment: AppRouteHandler<typeof getEnrollment> = async (c) =>
  c.json(
    await readRecord(
      c.get('deps').database.db,
      c.get('auth').orgId,
      'enrollment',
      c.req.valid('param').request_uuid,
    ),
    200,
  );

export const verification: AppRouteHandler<typeof getVerification> = async (c) =>
  c.json(
    await readRecord(
      c.get('deps').database.db,
      c.get('auth').orgId,
      'verification',
      c.req.valid('param').request_uuid,
    ),
    200,
  );

export const audioCheck: AppRouteHandler<typeof createAudioCheck> = async (c) =>
  c.json(
    await checkRecording(c.get('deps'), c.req.valid('json').voice_data, c.req.raw.signal),
    200,
  );
