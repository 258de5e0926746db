import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import { API_BASE_PATH } from '@voxkey/contract';
import { sql } from 'kysely';
import { ApiError, createErrorHandler, type ErrorReporter } from './http/errors.js';
import { requireOwnOrganisation, requireToken } from './http/middleware/auth.js';
import { limitBodySize, requireJsonBodies } from './http/middleware/json-body.js';
import type { AppDeps, AppEnv } from './http/types.js';
import { billingRouter } from './routes/billing/index.js';
import { organisationsRouter } from './routes/organisations/index.js';
import { predefinedTextsRouter } from './routes/predefined-texts/index.js';
import { tokensRouter } from './routes/tokens/index.js';
import { usersRouter } from './routes/users/index.js';
import { voiceRouter } from './routes/voice/index.js';
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
    .route('/', webhooksRouter);
}

export function createApp(deps: AppDeps, options: CreateAppOptions = {}) {
  const reportError: ErrorReporter = options.reportError ?? ((err) => console.error(err));
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

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await sql`select 1`.execute(deps.database.db);
      return c.json({ status: 'ready' });
    } catch {
      return c.json({ status: 'unavailable', code: 503, message: 'Database unreachable' }, 503);
    }
  });
  app.get('/openapi.json', (c) => c.body(openApiDocument, 200, { 'Content-Type': 'application/json; charset=utf-8' }));
  app.get(
    '/docs',
    Scalar({
      url: '/openapi.json',
      pageTitle: 'Voxkey API reference',
      ...(deps.config.DOCS_SCRIPT_URL ? { cdn: deps.config.DOCS_SCRIPT_URL } : {}),
    }),
  );

  const api = new OpenAPIHono<AppEnv>();
  api.use('*', limitBodySize(deps.config.BODY_LIMIT_BYTES), requireJsonBodies(), requireToken());
  api.use('/organisations/:org_id', requireOwnOrganisation());
  api.use('/organisations/:org_id/*', requireOwnOrganisation());
  api.route('/', createApi());
  app.route(API_BASE_PATH, api);

  return app;
}

export type App = ReturnType<typeof createApp>;
