import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/connection.js';
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
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    auth: AuthContext;
  };
}

export type AppOpenAPI = OpenAPIHono<AppEnv>;
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
