import { createRoute } from '@hono/zod-openapi';
import {
  audioCheckErrorResponses,
  commonErrorResponses,
  enrollmentErrorResponses,
  jsonBody,
  jsonResponse,
  OrgPathParams,
  verificationErrorResponses,
} from '../schemas/common.js';
import {
  AcceptedSchema,
  anyUuid,
  AudioCheckRequestSchema,
  AudioCheckSchema,
  EnrollmentRequestSchema,
  RequestRecordSchema,
  uuidV4,
  VerificationRequestSchema,
} from '../schemas/voice.js';

const tags = ['Voice'];
const acceptedHeaders = {
  Location: {
    description: 'Where the request record can be read.',
    schema: { type: 'string' as const },
  },
};
const requestUuidParam = { name: 'request_uuid', in: 'path', required: true } as const;
/** An enrolment's request_uuid is a UUID v4. */
const EnrollmentPathParams = OrgPathParams.extend({
  request_uuid: uuidV4('Must be a valid UUID v4').openapi({
    param: requestUuidParam,
    description: 'The request_uuid (a UUID v4) sent with the enrolment.',
  }),
});
/** A verification's request_uuid is any UUID (v1 to v8), as in the request. */
const VerificationPathParams = OrgPathParams.extend({
  request_uuid: anyUuid('Must be a valid UUID').openapi({
    param: requestUuidParam,
    description: 'The request_uuid (any UUID) sent with the verification.',
  }),
});

export const createEnrollment = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/enrollments',
  operationId: 'createEnrollment',
  'x-voxkey-retry': 'safe',
  summary: 'Enrol a user by voice',
  description:
    'Accepted once durably queued; the result arrives as an `enrollment.completed` webhook. ' +
    '409 when no callback URL is configured, when the external_id is already enrolled (mode `new`) or being enrolled, when the voiceprint already holds the maximum of samples (mode `add`), or when request_uuid was used with a different body. ' +
    '404 when mode is `add` and the external_id has no voiceprint. ' +
    'With `challenge_id` or `text_id` the recording must say that phrase: the result reports `phrase`, and an enrolment whose recording does not say it fails with `phrase_not_matched` (nothing is stored).',
  tags,
  request: { params: OrgPathParams, body: jsonBody(EnrollmentRequestSchema) },
  responses: {
    202: {
      ...jsonResponse(AcceptedSchema, 'Accepted; the result will be delivered by webhook.'),
      headers: acceptedHeaders,
    },
    ...commonErrorResponses,
    ...enrollmentErrorResponses,
  },
});

export const createVerification = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/verifications',
  operationId: 'createVerification',
  'x-voxkey-retry': 'safe',
  summary: 'Verify a user by voice',
  description:
    'Accepted once durably queued; the result arrives as a `verification.completed` webhook. 404 when the external_id is not enrolled; 403 when the user is deactivated. ' +
    'With `challenge_id` (a one-time phrase from `POST .../challenges`, consumed when the request is accepted) or `text_id` (a predefined text), the result reports `phrase`: whether the recording says it. ' +
    'With the organisation setting `require_phrase`, a verification without either is a 400 (`phrase_required` on `challenge_id`) and one whose phrase does not match is `rejected` with `phrase_not_matched`.',
  tags,
  request: { params: OrgPathParams, body: jsonBody(VerificationRequestSchema) },
  responses: {
    202: {
      ...jsonResponse(AcceptedSchema, 'Accepted; the result will be delivered by webhook.'),
      headers: acceptedHeaders,
    },
    ...commonErrorResponses,
    ...verificationErrorResponses,
  },
});

export const getEnrollment = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/enrollments/{request_uuid}',
  operationId: 'getEnrollment',
  'x-voxkey-retry': 'safe',
  summary: 'Read an enrolment request and its outcome',
  tags,
  request: { params: EnrollmentPathParams },
  responses: {
    200: jsonResponse(RequestRecordSchema, 'The request record.'),
    ...commonErrorResponses,
  },
});

export const getVerification = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/verifications/{request_uuid}',
  operationId: 'getVerification',
  'x-voxkey-retry': 'safe',
  summary: 'Read a verification request and its outcome',
  tags,
  request: { params: VerificationPathParams },
  responses: {
    200: jsonResponse(RequestRecordSchema, 'The request record.'),
    ...commonErrorResponses,
  },
});

export const createAudioCheck = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/audio-checks',
  operationId: 'createAudioCheck',
  summary: 'Check a recording before enrolling or verifying',
  description:
    'Answers synchronously with what the engine sees in the recording (format, speech, noise, clipping) and the problems that would make an enrolment or verification fail, ' +
    'so an app can ask the person to record again. Stores nothing and is not billed. Bad base64 or a file that is not WAV/MP3 is a 400 on voice_data.',
  // Stores nothing: repeating it is harmless.
  'x-voxkey-retry': 'safe',
  tags,
  request: { params: OrgPathParams, body: jsonBody(AudioCheckRequestSchema) },
  responses: {
    200: jsonResponse(AudioCheckSchema, 'What the engine sees in the recording.'),
    ...commonErrorResponses,
    ...audioCheckErrorResponses,
  },
});

export const voiceRoutes = {
  createEnrollment,
  createVerification,
  getEnrollment,
  getVerification,
  createAudioCheck,
};
