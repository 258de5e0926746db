import { type AddressInfo, createServer } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createApp } from './app.js';
import { attachWebSockets } from './http/websocket.js';
import { type AppConfig, ConfigError } from './config.js';
import { createRuntime } from './runtime.js';
import { bootstrapDemoOrganisation } from './services/bootstrap.js';
import { createWorkerApp } from './worker-app.js';

import type { Logger } from 'pino';
import { createLogger } from './observability/logger.js';

/**
 * Resolves on the first SIGTERM/SIGINT. A second one (Ctrl-C twice, `docker kill` after `docker stop`)
 * exits at once through process.exit, which flushes the batched log lines; Node's default action for an
 * unhandled signal would end the process without that flush.
 */
function waitForSignal(logger: Logger): Promise<string> {
  return new Promise((resolve) => {
    let received: string | undefined;
    const onSignal = (signal: string) => {
      if (received) {
        logger.warn(
          { signal },
          'second signal while shutting down; exiting now (unfinished jobs are reclaimed when their lease expires)',
        );
        process.exit(1);
      }
      received = signal;
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** Ends a shutdown that takes longer than timeoutMs, with a log line saying so. */
function exitAfter(logger: Logger, timeoutMs: number): NodeJS.Timeout {
  const deadline = setTimeout(() => {
    logger.error(
      { timeoutMs },
      'shutdown timed out; exiting (unfinished jobs are reclaimed when their lease expires)',
    );
    process.exit(1);
  }, timeoutMs);
  deadline.unref();
  return deadline;
}

/** A port this process cannot listen on is a configuration error, said in one line (exit 2), not a stack trace. */
function listenError(err: unknown, host: string, port: number, variable: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE')
    return new ConfigError(
      `${variable}=${port} is already in use on ${host} (another Voxkey process or another program): stop it or set ${variable} to a free port`,
    );
  if (code === 'EACCES')
    return new ConfigError(
      `${variable}=${port}: this user may not listen on ${host}:${port} (ports below 1024 need privileges): set ${variable} to a port above 1023`,
    );
  if (code === 'EADDRNOTAVAIL')
    return new ConfigError(`HOST=${host} is not an address of this machine: set HOST to one`);
  return err;
}

/** Fails fast, before the models load, when the port cannot be listened on. */
function checkCanListen(host: string, port: number, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err) => reject(listenError(err, host, port, variable)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** Serves `fetch` on host:port; resolves once listening, rejects (as listenError says) when it cannot. */
function listen(
  fetch: Parameters<typeof serve>[0]['fetch'],
  host: string,
  port: number,
  variable: string,
): Promise<{ server: ServerType; address: AddressInfo }> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(listenError(err, host, port, variable));
    const server = serve({ fetch, hostname: host, port }, (address) => {
      server.off('error', onError);
      resolve({ server, address });
    });
    server.once('error', onError);
  });
}

/** The API server, with the job runner and webhook dispatcher in the same process unless RUN_WORKERS=false. */
export async function startServer(config: AppConfig): Promise<void> {
  const logger = createLogger(config.LOG_LEVEL);
  await checkCanListen(config.HOST, config.PORT, 'PORT');
  const runtime = await createRuntime(config, { withWorkers: config.RUN_WORKERS, logger });
  const app = createApp(runtime.deps);
  let listening: Awaited<ReturnType<typeof listen>>;
  try {
    if (config.BOOTSTRAP_DEMO_ORG) {
      // Printed to stdout as plain text, not logged: the token is a secret meant for the operator's eyes only.
      await bootstrapDemoOrganisation(runtime.deps, (text) =>
        process.stdout.write(`${text.replaceAll('PORT', String(config.PORT))}\n`),
      );
    }
    listening = await listen(app.fetch, config.HOST, config.PORT, 'PORT');
  } catch (err) {
    // Release the engine and the pool, so the process exits with the error instead of lingering half-started.
    await runtime.close();
    throw err;
  }
  const { server, address } = listening;
  attachWebSockets(server, app, (err) => logger.error({ err }, 'websocket upgrade failed'));
  // Node closes a request that takes longer than this to arrive; header time is bounded too.
  const http = server as unknown as { requestTimeout: number; headersTimeout: number };
  http.requestTimeout = config.REQUEST_TIMEOUT_MS;
  http.headersTimeout = Math.min(config.REQUEST_TIMEOUT_MS, 20_000);
  logger.info(
    { port: address.port },
    `Voxkey listening on http://${config.HOST === '0.0.0.0' ? 'localhost' : config.HOST}:${address.port} (API under /v1, docs at /docs)`,
  );
  runtime.startWorkers();

  const signal = await waitForSignal(logger);
  logger.info({ signal }, 'shutting down: no new requests, finishing in-flight jobs');
  const deadline = exitAfter(logger, config.SHUTDOWN_TIMEOUT_MS);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Open streams finish their decisions (the job runner is still up), then close with 1001.
  await runtime.deps.streams?.shutdown();
  await closed;
  await runtime.close();
  clearTimeout(deadline);
  logger.info('shutdown complete');
}

/** A worker process: jobs and webhooks, plus /healthz, /readyz and /metrics on WORKER_PORT (`voxkey worker`). */
export async function startWorker(config: AppConfig): Promise<void> {
  const logger = createLogger(config.LOG_LEVEL);
  await checkCanListen(config.HOST, config.WORKER_PORT, 'WORKER_PORT');
  const runtime = await createRuntime(config, { withWorkers: true, logger });
  let stopping = false;
  const app = createWorkerApp(
    runtime.deps,
    () => runtime.engine !== null,
    () => stopping,
  );
  const { server: healthServer, address } = await listen(
    app.fetch,
    config.HOST,
    config.WORKER_PORT,
    'WORKER_PORT',
  ).catch(async (err: unknown) => {
    // Taken since the check: release the engine and the pool so the process can exit with the error.
    await runtime.close();
    throw err;
  });
  runtime.startWorkers();
  const host = config.HOST === '0.0.0.0' ? 'localhost' : config.HOST;
  logger.info(
    { port: address.port },
    `Voxkey worker running (jobs and webhooks); health on http://${host}:${address.port} (/healthz, /readyz, /metrics)`,
  );
  const signal = await waitForSignal(logger);
  // Not ready from here on, so a supervisor stops counting on this process while it drains.
  stopping = true;
  logger.info({ signal }, 'shutting down: finishing in-flight work');
  const deadline = exitAfter(logger, config.SHUTDOWN_TIMEOUT_MS);
  await runtime.close();
  await new Promise<void>((resolve) => healthServer.close(() => resolve()));
  clearTimeout(deadline);
  logger.info('shutdown complete');
}
