import { ID_PATTERN, isRecordId, MAX_ID } from '@voxkey/contract';
import type { MiddlewareHandler } from 'hono';
import { findTokenByHash } from '../../repositories/tokens.js';
import { hashBearer, looksLikeBearer, sameHash } from '../../security/token-secrets.js';
import { ApiError, INVALID_CREDENTIALS } from '../../errors.js';
import type { AppEnv } from '../types.js';

const unauthorized = () => new ApiError('unauthorized', INVALID_CREDENTIALS, { headers: { 'WWW-Authenticate': 'Bearer' } });

/**
 * Resolves `Authorization: Bearer <token>` on every request, so disabling or deleting a token
 * takes effect on the very next request.
 */
export function requireToken(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !looksLikeBearer(match[1]!)) throw unauthorized();

    const presentedHash = hashBearer(match[1]!);
    const token = await findTokenByHash(c.var.deps.database.db, presentedHash);
    if (!token || !sameHash(token.token_hash, presentedHash)) throw unauthorized();
    if (!token.enabled) throw unauthorized();
    if (token.expires_at !== null && Date.parse(token.expires_at) <= Date.now()) throw unauthorized();

    c.set('auth', { orgId: token.org_id, tokenId: token.id, tokenKind: token.kind });
    await next();
  };
}

/**
 * Every `/organisations/{org_id}/...` route belongs to the token's own organisation only.
 * Another organisation's id gets 403 whether or not it exists, so nothing about it leaks.
 */
export function requireOwnOrganisation(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const orgParam = c.req.param('org_id') ?? c.req.path.split('/')[3] ?? '';
    if (!isRecordId(orgParam)) throw ApiError.field('org_id', ID_PATTERN.test(orgParam) ? 'out_of_range' : 'invalid_format', `Must be a positive integer up to ${MAX_ID}`);
    if (Number(orgParam) !== c.var.auth.orgId) {
      throw new ApiError('forbidden', 'This token is not allowed to access this organisation');
    }
    await next();
  };
}
