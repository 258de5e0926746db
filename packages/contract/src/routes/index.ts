import { billingRoutes } from './billing.js';
import { challengeRoutes } from './challenges.js';
import { organisationRoutes } from './organisations.js';
import { predefinedTextRoutes } from './predefined-texts.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './users.js';
import { voiceRoutes } from './voice.js';
import { webhookRoutes } from './webhooks.js';

export * from './billing.js';
export * from './challenges.js';
export * from './organisations.js';
export * from './predefined-texts.js';
export * from './tokens.js';
export * from './users.js';
export * from './voice.js';
export * from './webhooks.js';

/** Every route of the API, by operationId. The server must serve each exactly once. */
export const apiRoutes = {
  ...tokenRoutes,
  ...organisationRoutes,
  ...userRoutes,
  ...predefinedTextRoutes,
  ...billingRoutes,
  ...voiceRoutes,
  ...challengeRoutes,
  ...webhookRoutes,
};
