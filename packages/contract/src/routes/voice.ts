import { createRoute, z } from '@hono/zod-openapi';
import { commonErrorResponses, enrollmentErrorResponses, jsonBody, jsonResponse, OrgPathParams, verificationErrorResponses } from '../schemas/common.js';
import { AcceptedSchema, EnrollmentRequestSchema, RequestRecordSchema, UUID_V4_PATTERN, VerificationRequestSchema } from '../schemas/voice.js';

const tags = ['Voice'];
const acceptedHeaders = {
  Location: { description: 'Where the request record can be read.', schema: { type: 'string' as const } },
};
const RequestPathParams = OrgPathParams.extend({
  request_uuid: z
    .string()
    .regex(UUID_V4_PATTERN, 'Must be a valid UUID v4')
    .openapi({ param: { name: 'request_uuid', in: 'path', required: true }, description: 'The request_uuid sent with the request.' }),
});

export const createEnrollment = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/enrollments',
  operationId: 'createEnrollment',
  'x-voxkey-retry': 'safe',
  summary: 'Enrol a user by voice',
  description:
    'Accepted once durably queued; the result arrives as an `enrollment.completed` webhook. ' +
    '409 when no callback URL is configured, when the external_id is already enrolled or being enrolled, or when request_uuid was used with a different body.',
  tags,
  request: { params: OrgPathParams, body: jsonBody(EnrollmentRequestSchema) },
  responses: {
    202: { ...jsonResponse(AcceptedSchema, 'Accepted; the result will be delivered by webhook.'), headers: acceptedHeaders },
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
    'Accepted once durably queued; the result arrives as a `verification.completed` webhook. 404 when the external_id is not enrolled; 403 when the user is deactivated.',
  tags,
  request: { params: OrgPathParams, body: jsonBody(VerificationRequestSchema) },
  responses: {
    202: { ...jsonResponse(AcceptedSchema, 'Accepted; the result will be delivered by webhook.'), headers: acceptedHeaders },
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
  request: { params: RequestPathParams },
  responses: { 200: jsonResponse(RequestRecordSchema, 'The request record.'), ...commonErrorResponses },
});

export const getVerification = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/verifications/{request_uuid}',
  operationId: 'getVerification',
  'x-voxkey-retry': 'safe',
  summary: 'Read a verification request and its outcome',
  tags,
  request: { params: RequestPathParams },
  responses: { 200: jsonResponse(RequestRecordSchema, 'The request record.'), ...commonErrorResponses },
});

export const voiceRoutes = { createEnrollment, createVerification, getEnrollment, getVerification };
