import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/connection.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Sealer } from '../services/sealing.js';

export interface AuthContext {
  orgId: number;
  tokenId: number;
  tokenKind: 'live' | 'trial';
}

export interface JobSignals {
  /** Wakes this process's job runner (other processes poll). */
  jobQueued(): void;
  /** Wakes this process's webhook dispatcher. */
  deliveryQueued(): void;
}

export interface AppDeps {
  database: Database;
  config: AppConfig;
  sealer: Sealer;
  signals: JobSignals;
  /** Set when this process should process voice but cannot (e.g. no model installed): voice requests get 503. */
  voiceUnavailable?: string;
  observability: { logger: Logger; metrics: Metrics; poolStats?: () => { utilization: number; queueSize: number } };
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    auth: AuthContext;
    requestId: string;
  };
}

export type AppOpenAPI = OpenAPIHono<AppEnv>;
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
