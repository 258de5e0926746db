import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import type { AppConfig } from './config.js';
import type { Database } from './db/connection.js';
import { bootstrapDemoOrganisation } from './services/bootstrap.js';

export async function startServer(database: Database, config: AppConfig): Promise<void> {
  if (config.BOOTSTRAP_DEMO_ORG) {
    await bootstrapDemoOrganisation(database.db, (text) => console.log(text.replace('PORT', String(config.PORT))));
  }
  const app = createApp({ database, config });
  const server = serve({ fetch: app.fetch, hostname: config.HOST, port: config.PORT }, (info) => {
    console.log(`Voxkey listening on http://${config.HOST === '0.0.0.0' ? 'localhost' : config.HOST}:${info.port} (API under /v1, docs at /docs)`);
  });

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      console.log(`${signal} received: shutting down`);
      server.close(() => resolve());
      setTimeout(() => resolve(), 10_000).unref();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
