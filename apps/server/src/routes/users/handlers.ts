import type { deleteUser, getDevice, getUser, listUsers, updateUser } from '@voxkey/contract';
import { USER_FILTER_FIELDS, USER_SORT_FIELDS } from '@voxkey/contract';
import { ApiError } from '../../errors.js';
import { parseListQuery, setPaginationHeaders } from '../../http/list-params.js';
import type { AppRouteHandler } from '../../http/types.js';
import { deleteUserCompletely } from '../../services/user-erasure.js';
import * as users from '../../repositories/users.js';

export const list: AppRouteHandler<typeof listUsers> = async (c) => {
  const query = parseListQuery(c.req.valid('query'), USER_FILTER_FIELDS, USER_SORT_FIELDS);
  const result = await users.listUsers(c.get('deps').database.db, c.get('auth').orgId, query);
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(users.toUser) }, 200);
};

export const get: AppRouteHandler<typeof getUser> = async (c) => {
  const row = await users.findUser(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').user_id),
  );
  if (!row) throw ApiError.notFound('User');
  return c.json(users.toUser(row), 200);
};

export const update: AppRouteHandler<typeof updateUser> = async (c) => {
  const { is_active } = c.req.valid('json');
  const row = await users.setUserActive(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').user_id),
    is_active,
  );
  if (!row) throw ApiError.notFound('User');
  return c.json(users.toUser(row), 200);
};

export const remove: AppRouteHandler<typeof deleteUser> = async (c) => {
  const row = await deleteUserCompletely(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').user_id),
  );
  if (!row) throw ApiError.notFound('User');
  return c.json(users.toUser(row), 200);
};

export const device: AppRouteHandler<typeof getDevice> = async (c) => {
  const row = await users.findDevice(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').device_id),
  );
  if (!row) throw ApiError.notFound('Device');
  return c.json(users.toDevice(row), 200);
};
