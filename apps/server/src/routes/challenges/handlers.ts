import type { createChallenge } from '@voxkey/contract';
import type { AppRouteHandler } from '../../http/types.js';
import * as challenges from '../../services/challenges.js';

export const create: AppRouteHandler<typeof createChallenge> = async (c) =>
  c.json(
    await challenges.createChallenge(c.get('deps'), c.get('auth').orgId, c.req.valid('json')),
    201,
  );
