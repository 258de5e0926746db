import { USER_FILTER_FIELDS } from '@voxkey/contract';
import type { Executor } from '../db/connection.js';
import type { DeviceRow, UserRow } from '../db/types.js';
import { fromFlag, nowIso, toFlag } from './clock.js';
import { compiledOnce } from './compiled-once.js';
import { columnsOf, type ListQuery, type ListResult, listRows } from './list-query.js';

export function toUser(row: UserRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    external_id: row.external_id,
    is_active: fromFlag(row.is_active),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toDevice(row: DeviceRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    fingerprint: row.fingerprint,
    type: row.type,
    last_used: row.last_used,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const USER_FIELDS = columnsOf(USER_FILTER_FIELDS);

export function listUsers(
  db: Executor,
  orgId: number,
  query: ListQuery,
): Promise<ListResult<UserRow>> {
  return listRows(
    db.selectFrom('users').selectAll().where('org_id', '=', orgId),
    query,
    USER_FIELDS,
  );
}

const selectUserById = compiledOnce((db, orgId: number, id: number) =>
  db.selectFrom('users').selectAll().where('org_id', '=', orgId).where('id', '=', id),
);

export async function findUser(
  db: Executor,
  orgId: number,
  id: number,
): Promise<UserRow | undefined> {
  return (await selectUserById(db, orgId, id))[0];
}

const selectUserByExternalId = compiledOnce((db, orgId: number, externalId: string) =>
  db
    .selectFrom('users')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('external_id', '=', externalId),
);

export async function findUserByExternalId(
  db: Executor,
  orgId: number,
  externalId: string,
): Promise<UserRow | undefined> {
  return (await selectUserByExternalId(db, orgId, externalId))[0];
}

export async function insertUser(
  db: Executor,
  orgId: number,
  externalId: string,
): Promise<UserRow> {
  const now = nowIso();
  return db
    .insertInto('users')
    .values({
      org_id: orgId,
      external_id: externalId,
      is_active: 1,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function setUserActive(
  db: Executor,
  orgId: number,
  id: number,
  active: boolean,
): Promise<UserRow | undefined> {
  return db
    .updateTable('users')
    .set({ is_active: toFlag(active), updated_at: nowIso() })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the user; devices (and, later, the voiceprint) go with it by foreign-key cascade. */
export function deleteUser(db: Executor, orgId: number, id: number): Promise<UserRow | undefined> {
  return db
    .deleteFrom('users')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export function findDevice(
  db: Executor,
  orgId: number,
  id: number,
): Promise<DeviceRow | undefined> {
  return db
    .selectFrom('devices')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Records a use of a user's device. `type` null (the request named none): a new device gets type 0,
 * a known one keeps its type.
 */
export async function upsertDevice(
  db: Executor,
  values: {
    orgId: number;
    userId: number;
    fingerprint: string;
    type: number | null;
    usedAt: string;
  },
): Promise<DeviceRow> {
  return db
    .insertInto('devices')
    .values({
      org_id: values.orgId,
      user_id: values.userId,
      fingerprint: values.fingerprint,
      type: values.type ?? 0,
      last_used: values.usedAt,
      created_at: values.usedAt,
      updated_at: values.usedAt,
    })
    .onConflict((oc) =>
      oc.columns(['user_id', 'fingerprint']).doUpdateSet({
        ...(values.type === null ? {} : { type: values.type }),
        last_used: values.usedAt,
        updated_at: values.usedAt,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}
