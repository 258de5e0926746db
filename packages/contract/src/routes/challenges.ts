import { createRoute } from '@hono/zod-openapi';
import {
  commonErrorResponses,
  IdempotencyKeyHeaders,
  idempotencyConflictResponse,
  idempotentResponse,
  jsonBody,
  OrgPathParams,
  unavailableResponse,
} from '../schemas/common.js';
import { ChallengeSchema, CreateChallengeRequestSchema } from '../schemas/challenges.js';

const tags = ['Voice'];

export const createChallenge = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/challenges',
  operationId: 'createChallenge',
  'x-voxkey-retry': 'idempotency-key',
  summary: 'Create a one-time phrase for a person to read',
  description:
    "Prompted-phrase liveness: show `text` to the person, record them reading it, and send the recording with `challenge_id` to `POST .../verifications` or `POST .../enrollments` (or a stream's `start`). " +
    'The result reports `phrase` (what the on-device speech recogniser heard and whether it matches), so a replayed or pre-made recording of the person fails the phrase even when the voice matches. ' +
    "A challenge belongs to this organisation and external_id, is used at most once (consumed when the request is accepted) and expires after the organisation's `challenge_ttl_seconds` (default 120 s). " +
    'It does not stop a real-time voice clone that can read the phrase aloud (see the README, Security).',
  tags,
  request: {
    params: OrgPathParams,
    headers: IdempotencyKeyHeaders,
    body: jsonBody(CreateChallengeRequestSchema),
  },
  responses: {
    201: idempotentResponse(ChallengeSchema, 'The challenge.'),
    ...commonErrorResponses,
    ...idempotencyConflictResponse,
    ...unavailableResponse,
  },
});

export const challengeRoutes = { createChallenge };
