import { deleteUser, getDevice, getUser, listUsers, updateUser } from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const usersRouter = createRouter()
  .openapi(listUsers, handlers.list)
  .openapi(getUser, handlers.get)
  .openapi(updateUser, handlers.update)
  .openapi(deleteUser, handlers.remove)
  .openapi(getDevice, handlers.device);
