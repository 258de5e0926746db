import { createHash } from 'node:crypto';
import { MAX_VOICEPRINT_SAMPLES } from '@voxkey/contract';
import {
  type AudioInfo,
  decodeBase64Audio,
  DEFAULT_INTAKE_LIMITS,
  type EngineErrorCode,
  inspectBytes,
  isEngineError,
} from '@voxkey/engine';
import type { Executor } from '../db/connection.js';
import type { EnrollmentMode, JobKind } from '../db/types.js';
import { isUniqueViolation } from '../db/errors.js';
import { ApiError, type FieldErrorCode } from '../errors.js';
import type { AppDeps, AuthContext } from '../deps.js';
import * as jobs from '../repositories/jobs.js';
import { fromFlag } from '../repositories/clock.js';
import { findSettings } from '../repositories/organisations.js';
import { sealRecording } from '../security/recordings.js';
import { admitJob } from './job-admission.js';
import { checkPhraseFields, type JobPhrase, settlePhraseClaim } from './phrases.js';
import { findUserByExternalId } from '../repositories/users.js';
import { countSamples, findUserWithVoiceprint } from '../repositories/voiceprints.js';

export interface VoiceRequestBody {
  voice_data: string;
  request_uuid: string;
  external_id: string;
  language: string;
  device_fingerprint?: string;
  device_type?: number;
  /** Enrolments only. */
  mode?: EnrollmentMode;
  /** The phrase the recording must say: a one-time challenge or a predefined text (not both). */
  challenge_id?: string;
  text_id?: number;
}

export const ACCEPTED_MESSAGE =
  'Request accepted; the result will be delivered to the callback URL.';

/**
 * Identifies the request's content, so a replay of the same request_uuid can be told from a reuse.
 * It hashes the recording's bytes, so two base64 spellings of one recording are the same request.
 */
export function requestFingerprint(
  kind: JobKind,
  body: Omit<VoiceRequestBody, 'voice_data'>,
  audio: Uint8Array,
): string {
  const canonical = JSON.stringify([
    kind,
    body.external_id,
    body.language,
    body.device_fingerprint ?? null,
    body.device_type ?? null,
    createHash('sha256').update(audio).digest('hex'),
    // Left out for the default mode, so fingerprints of requests stored before modes existed still match.
    ...(body.mode && body.mode !== 'new' ? [body.mode] : []),
    // Likewise left out when absent (requests stored before phrases existed).
    ...(body.challenge_id !== undefined ? [`challenge:${body.challenge_id}`] : []),
    ...(body.text_id !== undefined ? [`text:${body.text_id}`] : []),
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The field code for each reason the engine's intake check refuses a recording. */
export const AUDIO_FIELD_CODES: Partial<Record<EngineErrorCode, FieldErrorCode>> = {
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
      throw ApiError.field(
        'voice_data',
        AUDIO_FIELD_CODES[err.code] ?? 'invalid_value',
        err.message,
      );
    }
    throw err;
  }
}

/** base64 is an HTTP concern: the recording is decoded here, once, and travels as bytes from now on. */
const decodeVoiceData = (voiceData: string): Uint8Array =>
  onVoiceData(() => decodeBase64Audio(voiceData, DEFAULT_INTAKE_LIMITS.maxFileBytes));

/** The one header check (format, sample rate, duration); the worker trusts its result. */
const checkRecording = (bytes: Uint8Array): AudioInfo =>
  onVoiceData(() => inspectBytes(bytes, DEFAULT_INTAKE_LIMITS));

async function checkEnrolmentSubject(
  deps: AppDeps,
  orgId: number,
  externalId: string,
  mode: EnrollmentMode,
): Promise<void> {
  const db = deps.database.db;
  const { user, voiceprint } = (await findUserWithVoiceprint(db, orgId, externalId)) ?? {};
  if (mode === 'new' && user) {
    throw new ApiError(
      'already_enrolled',
      `external_id ${JSON.stringify(externalId)} is already enrolled; use mode "add" to add a recording or "replace" to enrol again`,
    );
  }
  if (mode === 'add') {
    if (!voiceprint)
      throw new ApiError(
        'user_not_enrolled',
        `No voiceprint for external_id ${JSON.stringify(externalId)}; enrol with mode "new" first`,
      );
    if ((await countSamples(db, voiceprint.id)) >= MAX_VOICEPRINT_SAMPLES) {
      throw new ApiError(
        'voiceprint_full',
        `The voiceprint of external_id ${JSON.stringify(externalId)} already holds the maximum of ${MAX_VOICEPRINT_SAMPLES} recordings; use mode "replace" to start again`,
      );
    }
  }
  if (await jobs.findEnrolmentInFlight(db, orgId, externalId)) {
    throw new ApiError(
      'enrollment_in_progress',
      `An enrolment for external_id ${JSON.stringify(externalId)} is already in progress`,
    );
  }
}

async function checkSubject(
  deps: AppDeps,
  orgId: number,
  kind: JobKind,
  body: Omit<VoiceRequestBody, 'voice_data'>,
): Promise<void> {
  const externalId = body.external_id;
  if (kind === 'enrollment')
    return checkEnrolmentSubject(deps, orgId, externalId, body.mode ?? 'new');
  const user = await findUserByExternalId(deps.database.db, orgId, externalId);
  if (!user)
    throw new ApiError(
      'user_not_enrolled',
      `No enrolled user with external_id ${JSON.stringify(externalId)}`,
    );
  if (!user.is_active)
    throw new ApiError('user_inactive', 'The user is deactivated and cannot be verified');
}

/**
 * Accepts an enrolment or verification: answers only once the job is durably stored.
 * A repeated request_uuid with the same content is answered again without a second job.
 */
export function acceptVoiceRequest(
  deps: AppDeps,
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>,
  kind: JobKind,
  body: VoiceRequestBody,
) {
  const { voice_data, ...fields } = body;
  return acceptRecording(deps, auth, kind, fields, () => decodeVoiceData(voice_data));
}

/**
 * The 503 of a voice request this server cannot process. It names the engine's error code, never
 * its message: that names local paths and is in the server log.
 */
export function voiceUnavailableError(code?: EngineErrorCode): ApiError {
  return new ApiError(
    'unavailable',
    code
      ? `Voice processing is unavailable on this server (${code}); the operator's server log has the details.`
      : 'Voice processing is unavailable on this server',
  );
}

/**
 * The settings a voice request needs, read once: the callback URL its result goes to (refused with
 * 409 without one) and whether a verification must say a phrase.
 */
export async function requireVoiceSettings(
  deps: AppDeps,
  orgId: number,
): Promise<{ callbackUrl: string; requirePhrase: boolean }> {
  if (deps.voiceUnavailable) throw voiceUnavailableError(deps.voiceUnavailable.code);
  const settings = await findSettings(deps.database.db, orgId);
  const callbackUrl = settings?.callback_url;
  if (!callbackUrl) {
    throw new ApiError(
      'no_callback_url',
      `No callback URL is configured: set one with PATCH /v1/organisations/${orgId}/settings {"org_id": ${orgId}, "settings": {"callback_url": "https://..."}}`,
    );
  }
  return { callbackUrl, requirePhrase: fromFlag(settings.require_phrase) };
}

/**
 * The request-side checks of a verification before its audio exists (a stream's `start`). The
 * phrase is settled here: a challenge is consumed at `start`, so it cannot expire while the person
 * speaks; the stream's recording is then accepted with this phrase (acceptRecording's `phrase`).
 */
export async function checkVerificationStart(
  deps: AppDeps,
  orgId: number,
  body: Omit<VoiceRequestBody, 'voice_data'>,
): Promise<JobPhrase | null> {
  const { requirePhrase } = await requireVoiceSettings(deps, orgId);
  if (await jobs.findJobByRequest(deps.database.db, orgId, body.request_uuid)) {
    throw new ApiError(
      'request_uuid_reused',
      'request_uuid was already used; a stream cannot be replayed, start a new one with a new request_uuid',
    );
  }
  await checkSubject(deps, orgId, 'verification', body);
  const claim = await checkPhraseFields(deps, orgId, 'verification', body, requirePhrase);
  return settlePhraseClaim(deps.database.db, orgId, claim, {
    externalId: body.external_id,
    requestUuid: body.request_uuid,
  });
}

/**
 * Accepts a recording that arrived as bytes (a posted request once its base64 is decoded, or a
 * finished stream): the same checks, job and answer for both. A challenge is consumed in the
 * transaction that stores the job, unless `settledPhrase` says the phrase was settled before (a
 * stream's `start`).
 */
export async function acceptRecording(
  deps: AppDeps,
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>,
  kind: JobKind,
  body: Omit<VoiceRequestBody, 'voice_data'>,
  readAudio: () => Uint8Array,
  options: { settledPhrase?: JobPhrase | null } = {},
) {
  const { orgId } = auth;
  const { callbackUrl, requirePhrase } = await requireVoiceSettings(deps, orgId);
  const db = deps.database.db;

  const audio = readAudio();
  const bodyHash = requestFingerprint(kind, body, audio);
  const accepted = { callback_url: callbackUrl, message: ACCEPTED_MESSAGE };
  const isReplay = async () => {
    const existing = await jobs.findJobByRequest(db, orgId, body.request_uuid);
    if (!existing) return false;
    if (existing.body_hash !== bodyHash || existing.kind !== kind) {
      throw new ApiError(
        'request_uuid_reused',
        'request_uuid was already used for a different request',
      );
    }
    return true;
  };

  try {
    const info = checkRecording(audio);
    await checkSubject(deps, orgId, kind, body);
    const claim =
      options.settledPhrase === undefined
        ? await checkPhraseFields(deps, orgId, kind, body, requirePhrase)
        : null;
    const settlePhrase = (trx: Executor) =>
      claim
        ? settlePhraseClaim(trx, orgId, claim, {
            externalId: body.external_id,
            requestUuid: body.request_uuid,
          })
        : Promise.resolve(options.settledPhrase ?? null);
    await admitJob(deps, auth, settlePhrase, {
      orgId,
      kind,
      requestUuid: body.request_uuid,
      bodyHash,
      externalId: body.external_id,
      language: body.language,
      deviceFingerprint: body.device_fingerprint ?? null,
      deviceType: body.device_type ?? null,
      recording: { bytes: sealRecording(deps.sealer, orgId, body.request_uuid, audio), info },
      mode: body.mode,
    });
  } catch (err) {
    // The request_uuid is looked up only when the request cannot be stored as new. A replay of an
    // accepted request is answered as it was, whatever has changed since it was stored (its
    // challenge used, its enrolment in flight, its organisation at a limit); a concurrent twin
    // that won the race is found the same way.
    if (!(err instanceof ApiError) && !isUniqueViolation(err)) throw err;
    if (await isReplay()) return accepted;
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      'enrollment_in_progress',
      `An enrolment for external_id ${JSON.stringify(body.external_id)} is already in progress`,
    );
  }
  deps.signals.jobQueued();
  return accepted;
}
