import type { createApiToken, deleteApiToken, listApiTokens, updateApiToken } from '@voxkey/contract';
import { TOKEN_FILTER_FIELDS, TOKEN_SORT_FIELDS } from '@voxkey/contract';
import { ApiError } from '../../errors.js';
import { parseListQuery, setPaginationHeaders } from '../../http/list-params.js';
import type { AppRouteHandler } from '../../http/types.js';
import * as tokens from '../../repositories/tokens.js';
import { issueToken } from '../../services/organisations.js';

export const create: AppRouteHandler<typeof createApiToken> = async (c) => {
  const body = c.req.valid('json');
  const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw ApiError.field('expires_at', 'must_be_in_future', 'Must be in the future');
  const created = await issueToken(c.var.deps.database.db, {
    orgId: c.var.auth.orgId,
    friendlyName: body.friendly_name,
    kind: 'live',
    enabled: body.enabled,
    expiresAt: expiresAt?.toISOString() ?? null,
  });
  return c.json(created, 201);
};

export const list: AppRouteHandler<typeof listApiTokens> = async (c) => {
  const query = parseListQuery(c.req.valid('query'), TOKEN_FILTER_FIELDS, TOKEN_SORT_FIELDS);
  const result = await tokens.listTokens(c.var.deps.database.db, c.var.auth.orgId, query);
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(tokens.toApiToken) }, 200);
};

export const update: AppRouteHandler<typeof updateApiToken> = async (c) => {
  const { token_id } = c.req.valid('param');
  const { enabled } = c.req.valid('json');
  const row = await tokens.setTokenEnabled(c.var.deps.database.db, c.var.auth.orgId, Number(token_id), enabled);
  if (!row) throw ApiError.notFound('API token');
  return c.json(tokens.toApiToken(row), 200);
};

export const remove: AppRouteHandler<typeof deleteApiToken> = async (c) => {
  const { token_id } = c.req.valid('param');
  const row = await tokens.deleteToken(c.var.deps.database.db, c.var.auth.orgId, Number(token_id));
  if (!row) throw ApiError.notFound('API token');
  return c.json(tokens.toApiToken(row), 200);
};
