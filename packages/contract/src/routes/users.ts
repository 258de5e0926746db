import { createRoute } from '@hono/zod-openapi';
import {
  commonErrorResponses,
  jsonBody,
  jsonResponse,
  OrgPathParams,
  pathId,
} from '../schemas/common.js';
import { listQuerySchema, listResponse } from '../schemas/list.js';
import {
  DeviceSchema,
  UpdateUserBodySchema,
  USER_FILTER_FIELDS,
  USER_SORT_FIELDS,
  UserSchema,
} from '../schemas/users.js';

const tags = ['Users'];
const UserPathParams = OrgPathParams.extend({
  user_id: pathId('user_id', 'Service-assigned user identifier.'),
});
const DevicePathParams = OrgPathParams.extend({
  device_id: pathId('device_id', 'Device identifier.'),
});

export const listUsers = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/users',
  operationId: 'listUsers',
  'x-voxkey-retry': 'safe',
  summary: 'List users',
  description: 'Find a user by your own identifier with `filter=external_id=<value>`.',
  tags,
  request: { params: OrgPathParams, query: listQuerySchema(USER_FILTER_FIELDS, USER_SORT_FIELDS) },
  responses: {
    200: listResponse(UserSchema, 'UserList', 'A page of users.'),
    ...commonErrorResponses,
  },
});

export const getUser = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/users/{user_id}',
  operationId: 'getUser',
  'x-voxkey-retry': 'safe',
  summary: 'Get a user',
  tags,
  request: { params: UserPathParams },
  responses: { 200: jsonResponse(UserSchema, 'The user.'), ...commonErrorResponses },
});

export const updateUser = createRoute({
  method: 'patch',
  path: '/organisations/{org_id}/users/{user_id}',
  operationId: 'updateUser',
  'x-voxkey-retry': 'never',
  summary: 'Activate or deactivate a user',
  description:
    'A deactivated user keeps the voiceprint but cannot be verified; reactivation is immediate.',
  tags,
  request: { params: UserPathParams, body: jsonBody(UpdateUserBodySchema) },
  responses: { 200: jsonResponse(UserSchema, 'The updated user.'), ...commonErrorResponses },
});

export const deleteUser = createRoute({
  method: 'delete',
  path: '/organisations/{org_id}/users/{user_id}',
  operationId: 'deleteUser',
  'x-voxkey-retry': 'safe',
  summary: 'Delete a user and erase the voiceprint',
  description: 'Irreversible. The external_id may be enrolled again afterwards as a new user.',
  tags,
  request: { params: UserPathParams },
  responses: {
    200: jsonResponse(UserSchema, 'The user as it was at deletion.'),
    ...commonErrorResponses,
  },
});

export const getDevice = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/devices/{device_id}',
  operationId: 'getDevice',
  'x-voxkey-retry': 'safe',
  summary: 'Get a device',
  tags: ['Devices'],
  request: { params: DevicePathParams },
  responses: { 200: jsonResponse(DeviceSchema, 'The device.'), ...commonErrorResponses },
});

export const userRoutes = { listUsers, getUser, updateUser, deleteUser, getDevice };
