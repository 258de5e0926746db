import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/connection.js';

export interface AuthContext {
  orgId: number;
  tokenId: number;
  tokenKind: 'live' | 'trial';
}

export interface AppDeps {
  database: Database;
  config: AppConfig;
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    auth: AuthContext;
  };
}

export type AppOpenAPI = OpenAPIHono<AppEnv>;
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
