import { ID_PATTERN, isRecordId, MAX_ID, STREAM_BEARER_PREFIX } from '@voxkey/contract';
import type { MiddlewareHandler } from 'hono';
import { findTokenByHash } from '../../repositories/tokens.js';
import { hashBearer, looksLikeBearer, sameHash } from '../../security/token-secrets.js';
import { ApiError, INVALID_CREDENTIALS } from '../../errors.js';
import type { AppEnv } from '../types.js';

const unauthorized = () =>
  new ApiError('unauthorized', INVALID_CREDENTIALS, { headers: { 'WWW-Authenticate': 'Bearer' } });

/**
 * The token of `Authorization: Bearer <token>`; on a WebSocket upgrade without that header, the
 * `bearer.<token>` entry of `Sec-WebSocket-Protocol` (browsers cannot set headers on a WebSocket).
 * The header wins when both are present.
 */
function presentedBearer(
  authorization: string | undefined,
  upgrade: string | undefined,
  protocols: string | undefined,
): string | undefined {
  if (authorization !== undefined) return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  if (upgrade?.toLowerCase() !== 'websocket' || !protocols) return undefined;
  const entry = protocols
    .split(',')
    .map((p) => p.trim())
    .find((p) => p.startsWith(STREAM_BEARER_PREFIX));
  return entry?.slice(STREAM_BEARER_PREFIX.length) || undefined;
}

/**
 * Resolves `Authorization: Bearer <token>` on every request, so disabling or deleting a token
 * takes effect on the very next request.
 */
export function requireToken(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const bearer = presentedBearer(
      c.req.header('authorization'),
      c.req.header('upgrade'),
      c.req.header('sec-websocket-protocol'),
    );
    if (!bearer || !looksLikeBearer(bearer)) throw unauthorized();

    const presentedHash = hashBearer(bearer);
    const token = await findTokenByHash(c.get('deps').database.db, presentedHash);
    if (!token || !sameHash(token.token_hash, presentedHash)) throw unauthorized();
    if (!token.enabled) throw unauthorized();
    if (token.expires_at !== null && Date.parse(token.expires_at) <= Date.now())
      throw unauthorized();

    c.set('auth', {
      orgId: token.org_id,
      tokenId: token.id,
      tokenKind: token.kind,
      tokenExpiresAt: token.expires_at,
    });
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
    if (!isRecordId(orgParam))
      throw ApiError.field(
        'org_id',
        ID_PATTERN.test(orgParam) ? 'out_of_range' : 'invalid_format',
        `Must be a positive integer up to ${MAX_ID}`,
      );
    if (Number(orgParam) !== c.get('auth').orgId) {
      throw new ApiError('forbidden', 'This token is not allowed to access this organisation');
    }
    await next();
  };
}
