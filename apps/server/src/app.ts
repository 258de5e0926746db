import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenAPIHono } from '@hono/zod-openapi';
import { API_BASE_PATH } from '@voxkey/contract';
import { requestId } from 'hono/request-id';
import { rejectNulCharacters } from './http/middleware/no-nul.js';
import { observeRequests } from './http/middleware/observe.js';
import { apiSecurityHeaders } from './http/middleware/security-headers.js';
import { rateLimit } from './http/middleware/rate-limit.js';
import { ApiError } from './errors.js';
import { docsRouter } from './http/docs.js';
import { createErrorHandler, type ErrorReporter } from './http/errors.js';
import { createHealthRoutes } from './http/health.js';
import { requireOwnOrganisation, requireToken } from './http/middleware/auth.js';
import { honourIdempotencyKeys } from './http/middleware/idempotency.js';
import { readBodyWithinLimit, requireJsonBodies } from './http/middleware/json-body.js';
import type { AppDeps } from './deps.js';
import type { AppEnv } from './http/types.js';
import { billingRouter } from './routes/billing/index.js';
import { challengesRouter } from './routes/challenges/index.js';
import { organisationsRouter } from './routes/organisations/index.js';
import { predefinedTextsRouter } from './routes/predefined-texts/index.js';
import { tokensRouter } from './routes/tokens/index.js';
import { usersRouter } from './routes/users/index.js';
import { voiceRouter } from './routes/voice/index.js';
import { openVerificationStream, VERIFICATION_STREAM_PATH } from './routes/voice/stream.js';
import { webhooksRouter } from './routes/webhooks/index.js';

const OPENAPI_FILE = fileURLToPath(new URL('../../../openapi/openapi.json', import.meta.url));

/** The committed document, read once: what /openapi.json serves is exactly what is in the repository. */
function loadOpenApiDocument(): string {
  return readFileSync(OPENAPI_FILE, 'utf8');
}

export interface CreateAppOptions {
  reportError?: ErrorReporter;
}

export function createApi() {
  return new OpenAPIHono<AppEnv>()
    .route('/', tokensRouter)
    .route('/', organisationsRouter)
    .route('/', usersRouter)
    .route('/', predefinedTextsRouter)
    .route('/', billingRouter)
    .route('/', voiceRouter)
    .route('/', challengesRouter)
    .route('/', webhooksRouter);
}

export function createApp(deps: AppDeps, options: CreateAppOptions = {}) {
  const reportError: ErrorReporter =
    options.reportError ??
    ((err, context) => deps.observability.logger.error({ err, ...context }, 'unhandled error'));
  const openApiDocument = loadOpenApiDocument();
  const app = new OpenAPIHono<AppEnv>();

  app.onError(createErrorHandler(reportError));
  app.notFound(() => {
    throw ApiError.notFound('Route');
  });
  app.use('*', async (c, next) => {
    c.set('deps', deps);
    await next();
  });
  app.use('*', requestId({ limitLength: 128 }), observeRequests());

  app.route('/', createHealthRoutes(deps));
  app.get('/openapi.json', (c) =>
    c.body(openApiDocument, 200, { 'Content-Type': 'application/json; charset=utf-8' }),
  );
  app.route('/', docsRouter(deps.config));

  const api = new OpenAPIHono<AppEnv>();
  api.use('*', apiSecurityHeaders());
  // Headers first (type, token, rate limit), then the body: an unauthenticated body is never read.
  api.use(
    '*',
    requireJsonBodies(),
    requireToken(),
    rateLimit(),
    readBodyWithinLimit(deps.config.BODY_LIMIT_BYTES),
    rejectNulCharacters(),
  );
  api.use('/organisations/:org_id', requireOwnOrganisation());
  api.use('/organisations/:org_id/*', requireOwnOrganisation());
  api.use('/organisations/:org_id/*', honourIdempotencyKeys());
  // WebSocket, outside the OpenAPI routes (OpenAPI cannot describe it); before them, so `stream` is not taken for a request_uuid.
  api.get(VERIFICATION_STREAM_PATH, openVerificationStream as never);
  api.route('/', createApi());
  app.route(API_BASE_PATH, api);

  return app;
}

export type App = ReturnType<typeof createApp>;
