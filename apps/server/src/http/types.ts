import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { AppDeps, AuthContext } from '../deps.js';

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    auth: AuthContext;
    requestId: string;
  };
}

export type AppOpenAPI = OpenAPIHono<AppEnv>;
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
