import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import type { AppConfig } from './config.js';
import { createRuntime } from './runtime.js';
import { bootstrapDemoOrganisation } from './services/bootstrap.js';

const log = (line: string) => console.log(line);
const logError = (err: unknown) => console.error(err);

function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/** The API server, with the job runner and webhook dispatcher in the same process unless RUN_WORKERS=false. */
export async function startServer(config: AppConfig): Promise<void> {
  const runtime = await createRuntime(config, { withWorkers: config.RUN_WORKERS, log, logError });
  if (config.BOOTSTRAP_DEMO_ORG) {
    await bootstrapDemoOrganisation(runtime.deps, (text) => log(text.replaceAll('PORT', String(config.PORT))));
  }
  const app = createApp(runtime.deps, { reportError: logError });
  const server = serve({ fetch: app.fetch, hostname: config.HOST, port: config.PORT }, (info) => {
    log(`Voxkey listening on http://${config.HOST === '0.0.0.0' ? 'localhost' : config.HOST}:${info.port} (API under /v1, docs at /docs)`);
  });
  runtime.startWorkers();

  const signal = await waitForSignal();
  log(`${signal} received: shutting down`);
  const deadline = setTimeout(() => {
    console.error(`Shutdown took longer than ${config.SHUTDOWN_TIMEOUT_MS} ms; exiting`);
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS);
  deadline.unref();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await runtime.close();
  clearTimeout(deadline);
}

/** A worker process: jobs and webhooks only, no HTTP (`voxkey worker`). */
export async function startWorker(config: AppConfig): Promise<void> {
  const runtime = await createRuntime(config, { withWorkers: true, log, logError });
  runtime.startWorkers();
  log('Voxkey worker running (jobs and webhooks)');
  const signal = await waitForSignal();
  log(`${signal} received: finishing in-flight work`);
  const deadline = setTimeout(() => process.exit(1), config.SHUTDOWN_TIMEOUT_MS);
  deadline.unref();
  await runtime.close();
  clearTimeout(deadline);
}
