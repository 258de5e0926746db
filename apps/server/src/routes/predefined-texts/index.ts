import {
  createPredefinedText,
  deletePredefinedText,
  getPredefinedText,
  listPredefinedTexts,
  updatePredefinedText,
} from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const predefinedTextsRouter = createRouter()
  .openapi(createPredefinedText, handlers.create)
  .openapi(listPredefinedTexts, handlers.list)
  .openapi(getPredefinedText, handlers.get)
  .openapi(updatePredefinedText, handlers.update)
  .openapi(deletePredefinedText, handlers.remove);
