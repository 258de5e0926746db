import type { FieldTypes } from '../list-query.js';
import { createRoute, z } from '@hono/zod-openapi';
import {
  commonErrorResponses,
  IdempotencyKeyHeaders,
  idempotencyConflictResponse,
  idempotentResponse,
  jsonBody,
  jsonResponse,
  OrgPathParams,
  pathId,
} from '../schemas/common.js';
import { listQuerySchema, listResponse } from '../schemas/list.js';
import {
  ApiTokenSchema,
  CreateApiTokenBodySchema,
  CreatedApiTokenSchema,
  UpdateApiTokenBodySchema,
} from '../schemas/tokens.js';

const tags = ['API tokens'];
const TokenPathParams = OrgPathParams.extend({ token_id: pathId('token_id', 'Token identifier.') });

export const TOKEN_FILTER_FIELDS = {
  id: 'integer',
  friendly_name: 'string',
  enabled: 'boolean',
  created_at: 'timestamp',
} as const satisfies FieldTypes;
export const TOKEN_SORT_FIELDS = ['id', 'friendly_name', 'created_at'] as const;

export const createApiToken = createRoute({
  method: 'post',
  path: '/organisations/{org_id}/api-tokens',
  operationId: 'createApiToken',
  'x-voxkey-retry': 'idempotency-key',
  summary: 'Create an API token',
  description:
    'The raw token is returned once in `bearer`; only a hash is stored. Existing tokens stay valid (rotation).',
  tags,
  request: {
    params: OrgPathParams,
    headers: IdempotencyKeyHeaders,
    body: jsonBody(CreateApiTokenBodySchema),
  },
  responses: {
    201: idempotentResponse(CreatedApiTokenSchema, 'The token, with its raw value.'),
    ...commonErrorResponses,
    ...idempotencyConflictResponse,
  },
});

export const listApiTokens = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/api-tokens',
  operationId: 'listApiTokens',
  'x-voxkey-retry': 'safe',
  summary: 'List API tokens',
  description: 'Never includes the raw token values.',
  tags,
  request: {
    params: OrgPathParams,
    query: listQuerySchema(TOKEN_FILTER_FIELDS, TOKEN_SORT_FIELDS),
  },
  responses: {
    200: listResponse(ApiTokenSchema, 'ApiTokenList', 'A page of tokens.'),
    ...commonErrorResponses,
  },
});

export const updateApiToken = createRoute({
  method: 'patch',
  path: '/organisations/{org_id}/api-tokens/{token_id}',
  operationId: 'updateApiToken',
  'x-voxkey-retry': 'never',
  summary: 'Enable or disable an API token',
  description: 'Disabling takes effect on the very next request.',
  tags,
  request: { params: TokenPathParams, body: jsonBody(UpdateApiTokenBodySchema) },
  responses: {
    200: jsonResponse(ApiTokenSchema, 'The updated token.'),
    ...commonErrorResponses,
  },
});

export const deleteApiToken = createRoute({
  method: 'delete',
  path: '/organisations/{org_id}/api-tokens/{token_id}',
  operationId: 'deleteApiToken',
  'x-voxkey-retry': 'safe',
  summary: 'Delete an API token',
  description: 'Permanently removes the token; answers with the record as it was.',
  tags,
  request: { params: TokenPathParams },
  responses: {
    200: jsonResponse(ApiTokenSchema, 'The token as it was at deletion.'),
    ...commonErrorResponses,
  },
});

export const tokenRoutes = { createApiToken, listApiTokens, updateApiToken, deleteApiToken };
export type TokenListQuery = z.infer<typeof listApiTokens.request.query>;
