import { createChallenge } from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const challengesRouter = createRouter().openapi(createChallenge, handlers.create);
