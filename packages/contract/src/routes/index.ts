import { billingRoutes } from './billing.js';
import { organisationRoutes } from './organisations.js';
import { predefinedTextRoutes } from './predefined-texts.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './users.js';

export * from './billing.js';
export * from './organisations.js';
export * from './predefined-texts.js';
export * from './tokens.js';
export * from './users.js';

/** Every route of the API, by operationId. The server must serve each exactly once. */
export const apiRoutes = {
  ...tokenRoutes,
  ...organisationRoutes,
  ...userRoutes,
  ...predefinedTextRoutes,
  ...billingRoutes,
};
