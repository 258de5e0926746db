import { Hono } from 'hono';
import type { AppDeps } from './deps.js';
import { ApiError } from './errors.js';
import { createErrorHandler } from './http/errors.js';
import { createHealthRoutes } from './http/health.js';
import type { AppEnv } from './http/types.js';

/**
 * What `voxkey worker` serves on WORKER_PORT: health, readiness and metrics for a supervisor and Prometheus, no API.
 * Probes are not logged per request (a scrape every few seconds would drown the job log).
 */
export function createWorkerApp(
  deps: AppDeps,
  engineReady: () => boolean,
  draining: () => boolean = () => false,
) {
  const app = new Hono<AppEnv>();
  app.onError(
    createErrorHandler((err, context) =>
      deps.observability.logger.error({ err, ...context }, 'unhandled error'),
    ),
  );
  app.notFound(() => {
    throw ApiError.notFound('Route');
  });
  app.use('*', async (c, next) => {
    c.set('deps', deps);
    await next();
  });
  app.route('/', createHealthRoutes(deps, { engineReady, draining }));
  return app;
}
