import { createApiToken, deleteApiToken, listApiTokens, updateApiToken } from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const tokensRouter = createRouter()
  .openapi(createApiToken, handlers.create)
  .openapi(listApiTokens, handlers.list)
  .openapi(updateApiToken, handlers.update)
  .openapi(deleteApiToken, handlers.remove);
