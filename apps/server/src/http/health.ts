import { Hono } from 'hono';
import type { AppDeps } from '../deps.js';
import { ApiError, INVALID_CREDENTIALS } from '../errors.js';
import { pingDatabase } from '../repositories/health.js';
import { queueStats } from '../repositories/jobs.js';
import { bearerMatches } from '../security/token-secrets.js';
import type { AppEnv } from './types.js';

export interface HealthOptions {
  /**
   * Set in the worker: it is not ready without a working engine (processing voice is its whole job).
   * The API process leaves it out and stays ready for the rest of the API; its body says whether voice is available.
   */
  engineReady?: () => boolean;
  /** Set in the worker: true once it is shutting down (finishing its work), which takes it out of rotation. */
  draining?: () => boolean;
}

/** `/healthz` (alive), `/readyz` (database, and the engine in a worker) and `/metrics` (Prometheus), shared by `serve` and `worker`. */
export function createHealthRoutes(deps: AppDeps, options: HealthOptions = {}) {
  const routes = new Hono<AppEnv>();

  routes.get('/healthz', (c) => c.json({ status: 'ok' }));

  routes.get('/readyz', async (c) => {
    const databaseUp = await pingDatabase(deps.database.db).then(
      () => true,
      () => false,
    );
    // Unauthenticated: the engine's code only, its message (local paths) is in the server log.
    const voice = deps.voiceUnavailable
      ? `unavailable (${deps.voiceUnavailable.code})`
      : 'available';
    // A stuck engine thread (the watchdog's verdict) takes the process out of rotation until it restarts.
    const engineDegraded = deps.engineHealth?.() === 'degraded';
    if (!options.engineReady) {
      if (!databaseUp)
        return c.json({ status: 'unavailable', code: 503, message: 'Database unreachable' }, 503);
      if (engineDegraded) return c.json({ status: 'degraded', engine: 'degraded', voice }, 503);
      // Still ready for the rest of the API when this process cannot process voice; the body says so.
      return c.json({
        status: 'ready',
        voice,
        ...(deps.engineHealth ? { engine: deps.engineHealth() } : {}),
      });
    }
    const engineUp = options.engineReady() && !engineDegraded;
    const checks = {
      database: databaseUp ? 'ok' : 'unreachable',
      engine: engineDegraded ? 'degraded' : engineUp ? 'ok' : voice,
    };
    const draining = options.draining?.() ?? false;
    if (databaseUp && engineUp && !draining) return c.json({ status: 'ready', checks });
    return c.json(
      {
        status: engineDegraded ? 'degraded' : 'unavailable',
        code: 503,
        message: draining
          ? 'Shutting down'
          : databaseUp
            ? 'Engine unavailable'
            : 'Database unreachable',
        checks,
      },
      503,
    );
  });

  routes.get('/metrics', async (c) => {
    if (!deps.config.METRICS_ENABLED) throw ApiError.notFound('Route');
    if (
      deps.config.METRICS_TOKEN &&
      !bearerMatches(c.req.header('authorization'), deps.config.METRICS_TOKEN)
    ) {
      throw new ApiError('unauthorized', INVALID_CREDENTIALS, {
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    const { metrics } = deps.observability;
    const queue = await queueStats(deps.database.db);
    metrics.queueDepth.set({ status: 'queued' }, queue.queued);
    metrics.queueDepth.set({ status: 'processing' }, queue.processing);
    metrics.queueOldestAge.set(
      queue.oldestQueuedAt ? (Date.now() - Date.parse(queue.oldestQueuedAt)) / 1000 : 0,
    );
    const pool = deps.observability.poolStats?.();
    if (pool) {
      metrics.poolUtilization.set(pool.utilization);
      metrics.poolQueue.set(pool.queueSize);
    }
    return c.body(await metrics.registry.metrics(), 200, {
      'Content-Type': metrics.registry.contentType,
    });
  });

  return routes;
}
