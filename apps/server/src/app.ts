import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenAPIHono } from '@hono/zod-openapi';
import { API_BASE_PATH } from '@voxkey/contract';
import { requestId } from 'hono/request-id';
import { secureHeaders } from 'hono/secure-headers';
import { rejectNulCharacters } from './http/middleware/no-nul.js';
import { observeRequests } from './http/middleware/observe.js';
import { rateLimit } from './http/middleware/rate-limit.js';
import { pingDatabase } from './repositories/health.js';
import { queueStats } from './repositories/jobs.js';
import { ApiError, INVALID_CREDENTIALS } from './errors.js';
import { docsRouter } from './http/docs.js';
import { bearerMatches } from './security/token-secrets.js';
import { createErrorHandler, type ErrorReporter } from './http/errors.js';
import { requireOwnOrganisation, requireToken } from './http/middleware/auth.js';
import { readBodyWithinLimit, requireJsonBodies } from './http/middleware/json-body.js';
import type { AppDeps } from './deps.js';
import type { AppEnv } from './http/types.js';
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
  const reportError: ErrorReporter =
    options.reportError ?? ((err, context) => deps.observability.logger.error({ err, ...context }, 'unhandled error'));
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

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await pingDatabase(deps.database.db);
      const voice = deps.voiceUnavailable ? `unavailable: ${deps.voiceUnavailable}` : 'available';
      // A stuck engine thread: take this process out of rotation until its watchdog restarts it.
      if (deps.engineHealth?.() === 'degraded') return c.json({ status: 'degraded', engine: 'degraded', voice }, 503);
      // Still ready for the rest of the API when this process cannot process voice; the body says so.
      return c.json({ status: 'ready', voice, ...(deps.engineHealth ? { engine: deps.engineHealth() } : {}) });
    } catch {
      return c.json({ status: 'unavailable', code: 503, message: 'Database unreachable' }, 503);
    }
  });
  app.get('/openapi.json', (c) => c.body(openApiDocument, 200, { 'Content-Type': 'application/json; charset=utf-8' }));
  app.get('/metrics', async (c) => {
    if (!deps.config.METRICS_ENABLED) throw ApiError.notFound('Route');
    if (deps.config.METRICS_TOKEN && !bearerMatches(c.req.header('authorization'), deps.config.METRICS_TOKEN)) {
      throw new ApiError('unauthorized', INVALID_CREDENTIALS, { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    const { metrics } = deps.observability;
    const queue = await queueStats(deps.database.db);
    metrics.queueDepth.set({ status: 'queued' }, queue.queued);
    metrics.queueDepth.set({ status: 'processing' }, queue.processing);
    metrics.queueOldestAge.set(queue.oldestQueuedAt ? (Date.now() - Date.parse(queue.oldestQueuedAt)) / 1000 : 0);
    const pool = deps.observability.poolStats?.();
    if (pool) {
      metrics.poolUtilization.set(pool.utilization);
      metrics.poolQueue.set(pool.queueSize);
    }
    return c.body(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType });
  });
  app.route('/', docsRouter(deps.config));

  const api = new OpenAPIHono<AppEnv>();
  api.use('*', secureHeaders({ crossOriginResourcePolicy: false }));
  // Headers first (type, token, rate limit), then the body: an unauthenticated body is never read.
  api.use('*', requireJsonBodies(), requireToken(), rateLimit(), readBodyWithinLimit(deps.config.BODY_LIMIT_BYTES), rejectNulCharacters());
  api.use('/organisations/:org_id', requireOwnOrganisation());
  api.use('/organisations/:org_id/*', requireOwnOrganisation());
  api.route('/', createApi());
  app.route(API_BASE_PATH, api);

  return app;
}

export type App = ReturnType<typeof createApp>;
