import { getOrganisation, getSettings, updateOrganisation, updateSettings } from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const organisationsRouter = createRouter()
  .openapi(getOrganisation, handlers.get)
  .openapi(updateOrganisation, handlers.update)
  .openapi(getSettings, handlers.getSettingsHandler)
  .openapi(updateSettings, handlers.updateSettingsHandler);
