import { createHash } from 'node:crypto';
import { type AudioInfo, decodeBase64Audio, DEFAULT_INTAKE_LIMITS, type EngineErrorCode, inspectBytes, isEngineError } from '@voxkey/engine';
import type { JobKind } from '../db/types.js';
import { isUniqueViolation } from '../db/errors.js';
import { ApiError, type FieldErrorCode } from '../errors.js';
import type { AppDeps, AuthContext } from '../deps.js';
import * as jobs from '../repositories/jobs.js';
import { findPlanByName } from '../repositories/billing.js';
import { findSettings } from '../repositories/organisations.js';
import { DEFAULT_PLAN_NAME } from './organisations.js';
import { findUserByExternalId } from '../repositories/users.js';

export interface VoiceRequestBody {
  voice_data: string;
  request_uuid: string;
  external_id: string;
  language: string;
  device_fingerprint?: string;
  device_type?: number;
}

export const ACCEPTED_MESSAGE = 'Request accepted; the result will be delivered to the callback URL.';
const QUEUE_FULL_RETRY_AFTER_S = 5;

/**
 * Identifies the request's content, so a replay of the same request_uuid can be told from a reuse.
 * It hashes the recording's bytes, so two base64 spellings of one recording are the same request.
 */
export function requestFingerprint(kind: JobKind, body: Omit<VoiceRequestBody, 'voice_data'>, audio: Uint8Array): string {
  const canonical = JSON.stringify([
    kind,
    body.external_id,
    body.language,
    body.device_fingerprint ?? null,
    body.device_type ?? null,
    createHash('sha256').update(audio).digest('hex'),
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The field code for each reason the engine's intake check refuses a recording. */
const AUDIO_FIELD_CODES: Partial<Record<EngineErrorCode, FieldErrorCode>> = {
  invalid_base64: 'invalid_base64',
  unsupported_format: 'unsupported_audio_format',
  corrupt_audio: 'corrupt_audio',
  sample_rate_too_low: 'sample_rate_too_low',
  audio_too_short: 'audio_too_short',
  audio_too_long: 'audio_too_long',
  audio_too_large: 'audio_too_large',
};

/** Runs one of the engine's intake steps, turning its refusal into a 400 on `voice_data`. */
function onVoiceData<T>(step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (isEngineError(err) && err.category === 'invalid_input') {
      throw ApiError.field('voice_data', AUDIO_FIELD_CODES[err.code] ?? 'invalid_value', err.message);
    }
    throw err;
  }
}

/** base64 is an HTTP concern: the recording is decoded here, once, and travels as bytes from now on. */
const decodeVoiceData = (voiceData: string): Uint8Array => onVoiceData(() => decodeBase64Audio(voiceData, DEFAULT_INTAKE_LIMITS.maxFileBytes));

/** The one header check (format, sample rate, duration); the worker trusts its result. */
const checkRecording = (bytes: Uint8Array): AudioInfo => onVoiceData(() => inspectBytes(bytes, DEFAULT_INTAKE_LIMITS));

/**
 * Trial tokens are for sandbox use: together they may make as many enrolments and verifications
 * per calendar month (UTC) as the Sandbox plan includes.
 */
async function checkTrialQuota(deps: AppDeps, orgId: number): Promise<void> {
  const db = deps.database.db;
  const sandbox = await findPlanByName(db, DEFAULT_PLAN_NAME);
  const quota = sandbox?.monthly_calls_included ?? 100;
  const now = new Date();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  if ((await jobs.countJobsSince(db, orgId, monthStart.toISOString())) >= quota) {
    throw new ApiError('quota_exceeded', `Trial tokens are limited to the sandbox quota of ${quota} enrolments and verifications a month; create a production token`, {
      headers: { 'Retry-After': String(Math.ceil((nextMonth.getTime() - now.getTime()) / 1000)) },
    });
  }
}

async function checkSubject(deps: AppDeps, orgId: number, kind: JobKind, externalId: string): Promise<void> {
  const db = deps.database.db;
  const user = await findUserByExternalId(db, orgId, externalId);
  if (kind === 'enrollment') {
    if (user) throw new ApiError('already_enrolled', `external_id ${JSON.stringify(externalId)} is already enrolled; delete the user to enrol again`);
    if (await jobs.findEnrolmentInFlight(db, orgId, externalId)) {
      throw new ApiError('enrollment_in_progress', `An enrolment for external_id ${JSON.stringify(externalId)} is already in progress`);
    }
    return;
  }
  if (!user) throw new ApiError('user_not_enrolled', `No enrolled user with external_id ${JSON.stringify(externalId)}`);
  if (!user.is_active) throw new ApiError('user_inactive', 'The user is deactivated and cannot be verified');
}

/**
 * Accepts an enrolment or verification: answers only once the job is durably stored.
 * A repeated request_uuid with the same content is answered again without a second job.
 */
export async function acceptVoiceRequest(deps: AppDeps, auth: Pick<AuthContext, 'orgId' | 'tokenKind'>, kind: JobKind, body: VoiceRequestBody) {
  const { orgId } = auth;
  if (deps.voiceUnavailable) throw new ApiError('unavailable', `Voice processing is unavailable on this server: ${deps.voiceUnavailable}`);
  const db = deps.database.db;
  const settings = await findSettings(db, orgId);
  const callbackUrl = settings?.callback_url;
  if (!callbackUrl) {
    throw new ApiError(
      'no_callback_url',
      `No callback URL is configured: set one with PATCH /v1/organisations/${orgId}/settings {"org_id": ${orgId}, "settings": {"callback_url": "https://..."}}`,
    );
  }

  const audio = decodeVoiceData(body.voice_data);
  const bodyHash = requestFingerprint(kind, body, audio);
  const replay = async () => {
    const existing = await jobs.findJobByRequest(db, orgId, body.request_uuid);
    if (!existing) return false;
    if (existing.body_hash !== bodyHash || existing.kind !== kind) {
      throw new ApiError('request_uuid_reused', 'request_uuid was already used for a different request');
    }
    return true;
  };
  if (await replay()) return { callback_url: callbackUrl, message: ACCEPTED_MESSAGE };

  const info = checkRecording(audio);
  await checkSubject(deps, orgId, kind, body.external_id);
  if (auth.tokenKind === 'trial') await checkTrialQuota(deps, orgId);

  if ((await jobs.countUnfinishedJobs(db)) >= deps.config.JOB_MAX_QUEUE) {
    throw new ApiError('queue_full', 'The processing queue is full; retry later', { headers: { 'Retry-After': String(QUEUE_FULL_RETRY_AFTER_S) } });
  }

  try {
    await jobs.insertJob(db, {
      orgId,
      kind,
      requestUuid: body.request_uuid,
      bodyHash,
      externalId: body.external_id,
      language: body.language,
      deviceFingerprint: body.device_fingerprint ?? null,
      deviceType: body.device_type ?? null,
      recording: { bytes: audio, info },
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A concurrent twin won the race: either the same request_uuid or another enrolment of this external_id.
    if (await replay()) return { callback_url: callbackUrl, message: ACCEPTED_MESSAGE };
    throw new ApiError('enrollment_in_progress', `An enrolment for external_id ${JSON.stringify(body.external_id)} is already in progress`);
  }
  deps.signals.jobQueued();
  return { callback_url: callbackUrl, message: ACCEPTED_MESSAGE };
}
