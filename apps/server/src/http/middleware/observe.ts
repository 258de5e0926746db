import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../types.js';

/** One structured log line and the HTTP metrics per request, labelled by route template (never the raw path). */
export function observeRequests(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const { logger, metrics } = c.get('deps').observability;
      const template = routePath(c, -1);
      const route = !template || template.endsWith('*') ? 'unmatched' : template;
      const status = String(c.res.status);
      const seconds = (performance.now() - started) / 1000;
      const labels = { method: c.req.method, route, status };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
      const auth = c.get('auth');
      logger.info(
        {
          reqId: c.get('requestId'),
          orgId: auth?.orgId,
          method: c.req.method,
          route,
          status: c.res.status,
          latencyMs: Math.round(seconds * 10_000) / 10,
        },
        'request',
      );
    }
  };
}
