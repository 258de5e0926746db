import { TOKEN_FILTER_FIELDS } from '@voxkey/contract';
import type { Executor } from '../db/connection.js';
import type { ApiTokenRow, TokenKind } from '../db/types.js';
import { fromFlag, nowIso, toFlag } from './clock.js';
import { compiledOnce } from './compiled-once.js';
import { columnsOf, type ListQuery, type ListResult, listRows } from './list-query.js';

export function toApiToken(row: ApiTokenRow) {
  return {
    id: row.id,
    friendly_name: row.friendly_name,
    enabled: fromFlag(row.enabled),
    expires_at: row.expires_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type ApiToken = ReturnType<typeof toApiToken>;

const TOKEN_FIELDS = columnsOf(TOKEN_FILTER_FIELDS);

export async function insertToken(
  db: Executor,
  values: {
    orgId: number;
    friendlyName: string;
    tokenHash: string;
    kind: TokenKind;
    enabled: boolean;
    expiresAt: string | null;
  },
): Promise<ApiTokenRow> {
  const now = nowIso();
  return db
    .insertInto('api_tokens')
    .values({
      org_id: values.orgId,
      friendly_name: values.friendlyName,
      token_hash: values.tokenHash,
      kind: values.kind,
      enabled: toFlag(values.enabled),
      expires_at: values.expiresAt,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const selectTokenByHash = compiledOnce((db, tokenHash: string) =>
  db.selectFrom('api_tokens').selectAll().where('token_hash', '=', tokenHash),
);

/** Every authenticated request runs this (no cache: a disabled or deleted token is refused on its next request). */
export async function findTokenByHash(
  db: Executor,
  tokenHash: string,
): Promise<ApiTokenRow | undefined> {
  return (await selectTokenByHash(db, tokenHash))[0];
}

export function listTokens(
  db: Executor,
  orgId: number,
  query: ListQuery,
): Promise<ListResult<ApiTokenRow>> {
  return listRows(
    db.selectFrom('api_tokens').selectAll().where('org_id', '=', orgId),
    query,
    TOKEN_FIELDS,
  );
}

export function setTokenEnabled(
  db: Executor,
  orgId: number,
  id: number,
  enabled: boolean,
): Promise<ApiTokenRow | undefined> {
  return db
    .updateTable('api_tokens')
    .set({ enabled: toFlag(enabled), updated_at: nowIso() })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export function deleteToken(
  db: Executor,
  orgId: number,
  id: number,
): Promise<ApiTokenRow | undefined> {
  return db
    .deleteFrom('api_tokens')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
