import { createEngine, isEngineError, type VoiceEngine } from '@voxkey/engine';
import { type AppConfig, ensureDataDir } from './config.js';
import { type Database, openDatabase } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';
import type { AppDeps } from './deps.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics } from './observability/metrics.js';
import { createJobRunner, type JobRunner } from './workers/job-runner.js';
import { createSealer, resolveEncryptionKey } from './security/sealing.js';
import { createWebhookDispatcher, type WebhookDispatcher } from './workers/webhook-dispatcher.js';
import { createIdempotencyPurger } from './workers/idempotency-purge.js';

export interface Runtime {
  deps: AppDeps;
  engine: VoiceEngine | null;
  /** Starts the job runner and webhook dispatcher (when this process runs workers). */
  startWorkers(): void;
  /** Stops taking work, finishes what is in flight, closes the engine and the database. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  withWorkers: boolean;
  logger?: Logger;
  /** Tests inject a database; otherwise DATABASE_URL is opened and migrated. */
  database?: Database;
}

export async function createRuntime(config: AppConfig, options: RuntimeOptions): Promise<Runtime> {
  const dataDir = ensureDataDir(config);
  const database = options.database ?? openDatabase(config.DATABASE_URL, { poolSize: config.DATABASE_POOL_SIZE });
  if (!options.database) await migrateToLatest(database.db);
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  const metrics = createMetrics();
  const key = resolveEncryptionKey({
    configured: config.VOXKEY_ENCRYPTION_KEY,
    dataDir,
    allowGenerated: config.isDevelopment,
    log: (line) => logger.warn(line),
  });

  let runner: JobRunner | null = null;
  let dispatcher: WebhookDispatcher | null = null;
  const deps: AppDeps = {
    database,
    config,
    sealer: createSealer(key),
    signals: { jobQueued: () => runner?.wake(), deliveryQueued: () => dispatcher?.wake() },
    observability: { logger, metrics },
  };

  let engine: VoiceEngine | null = null;
  if (options.withWorkers) {
    try {
      engine = await createEngine({
        modelsDir: config.VOXKEY_MODELS_DIR,
        threads: config.ENGINE_THREADS,
        intraOpThreads: config.ENGINE_INTRA_OP_THREADS,
        taskTimeoutMs: config.ENGINE_TASK_TIMEOUT_MS,
      });
    } catch (err) {
      // Without a usable model the rest of the API still works; voice requests get a 503 that says why.
      if (!isEngineError(err) || err.category !== 'model') throw err;
      deps.voiceUnavailable = err.message;
      logger.error({ code: err.code }, `voice processing unavailable: ${err.message}`);
    }
  }
  if (engine) {
    logger.info({ speakerModel: engine.speakerModelId, spoofModel: engine.spoofModelId, threads: engine.stats().threads }, 'engine ready');
    const poolEngine = engine;
    deps.observability.poolStats = () => poolEngine.stats();
    runner = createJobRunner(deps, engine, engine.stats().threads);
  }
  if (options.withWorkers) dispatcher = createWebhookDispatcher(deps);
  const purger = options.withWorkers ? createIdempotencyPurger(deps) : null;

  return {
    deps,
    engine,
    startWorkers() {
      runner?.start();
      dispatcher?.start();
      purger?.start();
    },
    async close() {
      await runner?.stop();
      await dispatcher?.stop();
      await purger?.stop();
      await engine?.close();
      if (!options.database) await database.close();
    },
  };
}
