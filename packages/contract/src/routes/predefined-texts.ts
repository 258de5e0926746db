import { createRoute } from '@hono/zod-openapi';
import {
  commonErrorResponses,
  conflictResponse,
  createTextConflictResponse,
  IdempotencyKeyHeaders,
  idempotentResponse,
  jsonBody,
  jsonResponse,
  OrgPathParams,
  pathId,
} from '../schemas/common.js';
import { listQuerySchema, listResponse } from '../schemas/list.js';
import {
  CreatePredefinedTextBodySchema,
  PredefinedTextSchema,
  TEXT_FILTER_FIELDS,
  TEXT_SORT_FIELDS,
  UpdatePredefinedTextBodySchema,
} from '../schemas/predefined-texts.js';

const tags = ['Predefined texts'];
const TextPathParams = OrgPathParams.extend({
  text_id: pathId('text_id', 'Predefined text identifier.'),
});

export const createPredefinedText = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/predefined-texts',
  operationId: 'createPredefinedText',
  'x-voxkey-retry': 'idempotency-key',
  summary: 'Create a predefined text',
  description: '409 when the (language, text_code) pair already exists in the organisation.',
  tags,
  request: {
    params: OrgPathParams,
    headers: IdempotencyKeyHeaders,
    body: jsonBody(CreatePredefinedTextBodySchema),
  },
  responses: {
    201: idempotentResponse(PredefinedTextSchema, 'The new text.'),
    ...commonErrorResponses,
    ...createTextConflictResponse,
  },
});

export const listPredefinedTexts = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/predefined-texts',
  operationId: 'listPredefinedTexts',
  'x-voxkey-retry': 'safe',
  summary: 'List predefined texts',
  tags,
  request: { params: OrgPathParams, query: listQuerySchema(TEXT_FILTER_FIELDS, TEXT_SORT_FIELDS) },
  responses: {
    200: listResponse(PredefinedTextSchema, 'PredefinedTextList', 'A page of texts.'),
    ...commonErrorResponses,
  },
});

export const getPredefinedText = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/predefined-texts/{text_id}',
  operationId: 'getPredefinedText',
  'x-voxkey-retry': 'safe',
  summary: 'Get a predefined text',
  tags,
  request: { params: TextPathParams },
  responses: { 200: jsonResponse(PredefinedTextSchema, 'The text.'), ...commonErrorResponses },
});

export const updatePredefinedText = createRoute({
  method: 'patch',
  path: '/organisations/{org_id}/predefined-texts/{text_id}',
  operationId: 'updatePredefinedText',
  'x-voxkey-retry': 'never',
  summary: 'Update a predefined text',
  description: '409 when the resulting (language, text_code) pair belongs to another text.',
  tags,
  request: { params: TextPathParams, body: jsonBody(UpdatePredefinedTextBodySchema) },
  responses: {
    200: jsonResponse(PredefinedTextSchema, 'The updated text.'),
    ...commonErrorResponses,
    ...conflictResponse,
  },
});

export const deletePredefinedText = createRoute({
  method: 'delete',
  path: '/organisations/{org_id}/predefined-texts/{text_id}',
  operationId: 'deletePredefinedText',
  'x-voxkey-retry': 'safe',
  summary: 'Delete a predefined text',
  description: 'Past enrolments and verifications are not affected.',
  tags,
  request: { params: TextPathParams },
  responses: {
    200: jsonResponse(PredefinedTextSchema, 'The text as it was at deletion.'),
    ...commonErrorResponses,
  },
});

export const predefinedTextRoutes = {
  createPredefinedText,
  listPredefinedTexts,
  getPredefinedText,
  updatePredefinedText,
  deletePredefinedText,
};
