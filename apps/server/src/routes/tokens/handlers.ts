import type {
  createApiToken,
  deleteApiToken,
  listApiTokens,
  updateApiToken,
} from '@voxkey/contract';
import { TOKEN_FILTER_FIELDS, TOKEN_SORT_FIELDS } from '@voxkey/contract';
import type { AuthContext } from '../../deps.js';
import { ApiError } from '../../errors.js';
import { parseListQuery, setPaginationHeaders } from '../../http/list-params.js';
import type { AppRouteHandler } from '../../http/types.js';
import * as tokens from '../../repositories/tokens.js';
import { issueToken } from '../../services/organisations.js';

export const create: AppRouteHandler<typeof createApiToken> = async (c) => {
  const body = c.req.valid('json');
  const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
  if (expiresAt && expiresAt.getTime() <= Date.now())
    throw ApiError.field('expires_at', 'must_be_in_future', 'Must be in the future');
  const created = await issueToken(c.get('deps').database.db, {
    orgId: c.get('auth').orgId,
    friendlyName: body.friendly_name,
    kind: 'live',
    enabled: body.enabled,
    expiresAt: expiryAllowedFor(c.var.auth, expiresAt),
  });
  return c.json(created, 201);
};

/**
 * A token may only create tokens that expire no later than itself, so a trial token, or anything
 * it created, cannot outlive the trial. Nothing is shortened silently: without expires_at the new
 * token would never expire, so a creator that expires must name an expiry (docs/decisions.md).
 */
function expiryAllowedFor(auth: AuthContext, requested: Date | null): string | null {
  if (auth.tokenExpiresAt === null) return requested?.toISOString() ?? null;
  const creatorExpiry = new Date(auth.tokenExpiresAt).toISOString();
  if (requested === null) {
    throw ApiError.field(
      'expires_at',
      'outlives_creator',
      `Required when the token making the request expires: a token cannot outlive the token that creates it; give an expires_at no later than ${creatorExpiry}, or ask the operator for a non-expiring token (voxkey token create)`,
    );
  }
  if (requested.getTime() > Date.parse(auth.tokenExpiresAt)) {
    const who = auth.tokenKind === 'trial' ? 'A trial token' : 'A token that expires';
    throw ApiError.field(
      'expires_at',
      'outlives_creator',
      `${who} can only create tokens that expire by ${creatorExpiry}, when it expires itself`,
    );
  }
  return requested.toISOString();
}

export const list: AppRouteHandler<typeof listApiTokens> = async (c) => {
  const query = parseListQuery(c.req.valid('query'), TOKEN_FILTER_FIELDS, TOKEN_SORT_FIELDS);
  const result = await tokens.listTokens(c.get('deps').database.db, c.get('auth').orgId, query);
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(tokens.toApiToken) }, 200);
};

export const update: AppRouteHandler<typeof updateApiToken> = async (c) => {
  const { token_id } = c.req.valid('param');
  const { enabled } = c.req.valid('json');
  const row = await tokens.setTokenEnabled(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(token_id),
    enabled,
  );
  if (!row) throw ApiError.notFound('API token');
  return c.json(tokens.toApiToken(row), 200);
};

export const remove: AppRouteHandler<typeof deleteApiToken> = async (c) => {
  const { token_id } = c.req.valid('param');
  const row = await tokens.deleteToken(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(token_id),
  );
  if (!row) throw ApiError.notFound('API token');
  return c.json(tokens.toApiToken(row), 200);
};
