import { OpenAPIHono } from '@hono/zod-openapi';
import { apiRoutes, webhookEvents } from './routes/index.js';
import { STREAM_MESSAGE_SCHEMAS, STREAM_PROTOCOL_DESCRIPTION } from './schemas/streams.js';

export const API_BASE_PATH = '/v1';
export const API_VERSION = '0.1.0';

export const openApiConfig = {
  openapi: '3.1.0',
  info: {
    title: 'Voxkey API',
    version: API_VERSION,
    description:
      'Voice biometrics: enrol users by voice, verify them later with a deepfake/replay check, results delivered as signed webhooks. ' +
      'Every route needs `Authorization: Bearer <token>`. Errors are `{code, error, message}` (`error` is a stable machine-readable code, see `ErrorCode`); validation errors add `errors: [{field, code, message}]`.\n\n' +
      STREAM_PROTOCOL_DESCRIPTION,
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  // Relative, so the reference at /docs calls the server it is served from, on any port or behind any proxy.
  servers: [{ url: API_BASE_PATH, description: 'The server this document is served from' }],
  security: [{ bearerAuth: [] }],
};

export type OpenApiDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>;

export function registerSecurityScheme(app: OpenAPIHono<any>): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API token of the organisation (`vk_live_...`, or `vk_trial_...` for trial tokens).',
  });
}

/** Builds the OpenAPI 3.1 document from the route definitions alone (no server needed). */
export function buildOpenApiDocument(): OpenApiDocument {
  const app = new OpenAPIHono();
  registerSecurityScheme(app);
  for (const route of Object.values(apiRoutes)) app.openAPIRegistry.registerPath(route);
  for (const event of Object.values(webhookEvents)) {
    app.openAPIRegistry.registerWebhook(event);
  }
  for (const [name, schema] of Object.entries(STREAM_MESSAGE_SCHEMAS))
    app.openAPIRegistry.register(name, schema);
  return app.getOpenAPI31Document(openApiConfig);
}
