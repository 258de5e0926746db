import type { createEnrollment, createVerification, getEnrollment, getVerification } from '@voxkey/contract';
import type { JobKind } from '../../db/types.js';
import { ApiError } from '../../http/errors.js';
import type { AppRouteHandler } from '../../http/types.js';
import { findJobByRequest, toRequestRecord } from '../../repositories/jobs.js';
import { acceptVoiceRequest } from '../../services/voice-requests.js';

const location = (orgId: number, kind: JobKind, requestUuid: string) =>
  `/v1/organisations/${orgId}/${kind === 'enrollment' ? 'enrollments' : 'verifications'}/${requestUuid}`;

export const enrol: AppRouteHandler<typeof createEnrollment> = async (c) => {
  const body = c.req.valid('json');
  const accepted = await acceptVoiceRequest(c.var.deps, c.var.auth, 'enrollment', body);
  c.header('Location', location(c.var.auth.orgId, 'enrollment', body.request_uuid));
  return c.json(accepted, 202);
};

export const verify: AppRouteHandler<typeof createVerification> = async (c) => {
  const body = c.req.valid('json');
  const accepted = await acceptVoiceRequest(c.var.deps, c.var.auth, 'verification', body);
  c.header('Location', location(c.var.auth.orgId, 'verification', body.request_uuid));
  return c.json(accepted, 202);
};

async function readRecord(c: Parameters<AppRouteHandler<typeof getEnrollment>>[0], kind: JobKind, requestUuid: string) {
  const job = await findJobByRequest(c.var.deps.database.db, c.var.auth.orgId, requestUuid.toLowerCase());
  const sameCase = job ?? (await findJobByRequest(c.var.deps.database.db, c.var.auth.orgId, requestUuid));
  if (!sameCase || sameCase.kind !== kind) throw ApiError.notFound(kind === 'enrollment' ? 'Enrolment request' : 'Verification request');
  return toRequestRecord(sameCase);
}

export const enrolment: AppRouteHandler<typeof getEnrollment> = async (c) =>
  c.json(await readRecord(c, 'enrollment', c.req.valid('param').request_uuid), 200);

export const verification: AppRouteHandler<typeof getVerification> = async (c) =>
  c.json(await readRecord(c as never, 'verification', c.req.valid('param').request_uuid), 200);
