import { createEngine, isEngineError, type VoiceEngine } from '@voxkey/engine';
import { type AppConfig, ConfigError, ensureDataDir, isPlaceholderKey } from './config.js';
import { type Database, openDatabase } from './db/connection.js';
import { DatabaseStartError } from './db/errors.js';
import { migrateToLatest } from './db/migrate.js';
import type { AppDeps } from './deps.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics } from './observability/metrics.js';
import { createJobRunner, type JobRunner } from './workers/job-runner.js';
import { createSealer, resolveEncryptionKey, type Sealer } from './security/sealing.js';
import { checkKeyOnStoredSecrets } from './security/webhook-secrets.js';
import { type EngineWatchdog, watchEngine } from './workers/engine-watchdog.js';
import { startRetentionSweeps } from './workers/retention.js';
import { createWebhookDispatcher, type WebhookDispatcher } from './workers/webhook-dispatcher.js';
import { createIdempotencyPurger } from './workers/idempotency-purge.js';
import { createStreamRegistry } from './streams/registry.js';

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
  /** What the engine watchdog calls to end a process whose engine thread is stuck (default process.exit). */
  exit?: (code: number) => void;
}

/**
 * PostgreSQL migrates on its own connection without the statement timeout: a schema change, or
 * waiting for another process's migration lock, may take longer than any request should. SQLite
 * has no statement timeout (and an in-memory database exists only on its one connection).
 */
async function migrate(config: AppConfig, database: Database): Promise<void> {
  if (database.dialect === 'sqlite') {
    await migrateToLatest(database.db);
    return;
  }
  const migrations = openDatabase(config.DATABASE_URL, {
    poolSize: 1,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    preparedStatements: false,
  });
  try {
    await migrateToLatest(migrations.db);
  } finally {
    await migrations.close();
  }
}

export async function createRuntime(config: AppConfig, options: RuntimeOptions): Promise<Runtime> {
  const dataDir = ensureDataDir(config);
  let database: Database;
  try {
    database =
      options.database ??
      openDatabase(config.DATABASE_URL, {
        poolSize: config.DATABASE_POOL_SIZE,
        connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
        preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      });
  } catch (err) {
    throw new DatabaseStartError(config.DATABASE_URL, err);
  }
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  const metrics = createMetrics();
  const asStartError = <T>(step: Promise<T>) =>
    step.catch((err: unknown) => {
      throw new DatabaseStartError(config.DATABASE_URL, err);
    });
  let sealer: Sealer;
  try {
    // The key first: a mistyped key stops the process before it migrates anything.
    const key = resolveEncryptionKey({
      configured: config.VOXKEY_ENCRYPTION_KEY,
      dataDir,
      allowGenerated: config.isDevelopment,
      log: (line) => logger.warn(line),
    });
    sealer = createSealer(key);
    if (!options.database) await asStartError(migrate(config, database));
    const keyCheck = await asStartError(checkKeyOnStoredSecrets(database.db, sealer));
    if (keyCheck.tried > 0 && keyCheck.unopenedOrgIds.length === keyCheck.tried)
      throw new ConfigError(
        'VOXKEY_ENCRYPTION_KEY does not open the data this database holds (its newest webhook secrets were sealed with another key): give every process the key the database was first used with',
      );
    if (keyCheck.unopenedOrgIds.length > 0)
      logger.warn(
        { orgIds: keyCheck.unopenedOrgIds },
        "VOXKEY_ENCRYPTION_KEY does not open these organisations' webhook secrets (sealed with another key): their webhook deliveries cannot be signed",
      );
    if (!config.isDevelopment && isPlaceholderKey(key))
      logger.warn(
        'VOXKEY_ENCRYPTION_KEY looks like a placeholder, not a random key (too few distinct bytes): generate one with openssl rand -hex 32 for a new installation',
      );
  } catch (err) {
    if (!options.database) await database.close();
    throw err;
  }

  let runner: JobRunner | null = null;
  let dispatcher: WebhookDispatcher | null = null;
  let watchdog: EngineWatchdog | null = null;
  let retention: { stop(): void } | null = null;
  const deps: AppDeps = {
    database,
    config,
    sealer,
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
      // Without a usable model the rest of the API still works; voice requests get a 503 naming the error code.
      if (!isEngineError(err) || err.category !== 'model') throw err;
      deps.voiceUnavailable = { code: err.code };
      logger.error({ code: err.code }, `voice processing unavailable: ${err.message}`);
    }
  }
  // A process without workers starts a one-thread engine on its first audio check; one whose
  // engine could not start answers 503 (voiceUnavailable) without retrying it on every check.
  const checkEngine = engine || deps.voiceUnavailable ? null : lazyEngine(config);
  deps.audioChecker = engine ?? checkEngine ?? undefined;
  const loadedEngine = engine;
  if (loadedEngine) deps.phraseLanguages = async () => loadedEngine.phraseLanguages;
  else if (checkEngine) deps.phraseLanguages = () => checkEngine.phraseLanguages();
  const streamEngine = engine ?? checkEngine ?? undefined;
  deps.streams = createStreamRegistry(deps, () => streamEngine);
  if (engine) {
    logger.info(
      {
        speakerModel: engine.speakerModelId,
        spoofModel: engine.spoofModelId,
        threads: engine.stats().threads,
      },
      'engine ready',
    );
    const poolEngine = engine;
    deps.observability.poolStats = () => poolEngine.stats();
    watchdog = watchEngine(engine, {
      stuckAfterMs: config.ENGINE_STUCK_MS ?? config.ENGINE_TASK_TIMEOUT_MS + 10_000,
      exitAfterMs: config.ENGINE_WATCHDOG_EXIT_MS,
      logger,
      exit: options.exit ?? ((code) => process.exit(code)),
    });
    deps.engineHealth = watchdog.health;
    // One job more than the engine has threads: while a finished job is committed and the next one is
    // claimed and opened, the extra job is already waiting in the engine's queue, so no thread idles.
    runner = createJobRunner(deps, watchdog.analyzer, engine.stats().threads + 1);
  }
  if (options.withWorkers) dispatcher = createWebhookDispatcher(deps);
  if (options.withWorkers && !config.SMTP_URL)
    logger.info(
      'SMTP_URL is not set: no failure-alert email is sent, whatever an organisation sets in alert_on_failure',
    );
  const purger = options.withWorkers ? createIdempotencyPurger(deps) : null;

  return {
    deps,
    engine,
    startWorkers() {
      runner?.start();
      dispatcher?.start();
      if (options.withWorkers) retention = startRetentionSweeps(deps);
      purger?.start();
    },
    async close() {
      watchdog?.stop();
      retention?.stop();
      await runner?.stop();
      await dispatcher?.stop();
      await purger?.stop();
      await engine?.close();
      await checkEngine?.close();
      if (!options.database) await database.close();
    },
  };
}

/** An engine created on first use (and again after a failed start), for audio checks and stream probes only. */
function lazyEngine(config: AppConfig): Pick<VoiceEngine, 'checkAudio' | 'verify'> & {
  phraseLanguages(): Promise<readonly string[]>;
  close(): Promise<void>;
} {
  let started: Promise<VoiceEngine> | null = null;
  const start = () => {
    started ??= createEngine({
      modelsDir: config.VOXKEY_MODELS_DIR,
      threads: 1,
      warmup: false,
      taskTimeoutMs: config.ENGINE_TASK_TIMEOUT_MS,
    }).catch((err: unknown) => {
      started = null;
      throw err;
    });
    return started;
  };
  return {
    async checkAudio(...args) {
      return (await start()).checkAudio(...args);
    },
    async verify(...args) {
      return (await start()).verify(...args);
    },
    async phraseLanguages() {
      return (await start()).phraseLanguages;
    },
    async close() {
      const current = started;
      started = null;
      await current?.then((e) => e.close()).catch(() => undefined);
    },
  };
}
