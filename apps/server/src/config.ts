import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** `voxkey worker` serves /healthz, /readyz and /metrics here (0 picks a free port). */
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:|postgres:\/\/|postgresql:\/\/)/, 'must start with sqlite: or postgres://')
    .default('sqlite:./data/voxkey.db'),
  DATA_DIR: z.string().default('./data'),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(15 * 1024 * 1024),
  BOOTSTRAP_DEMO_ORG: booleanFromEnv.default(true),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  WEBHOOK_ALLOW_LOOPBACK: booleanFromEnv.default(false),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: booleanFromEnv.default(false),
  DOCS_SCRIPT_URL: z.string().optional(),
  VOXKEY_ENCRYPTION_KEY: z.string().min(1).optional(),
  VOXKEY_MODELS_DIR: z.string().optional(),
  ENGINE_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  ENGINE_INTRA_OP_THREADS: z.coerce.number().int().min(1).max(64).default(1),
  ENGINE_TASK_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  JOB_MAX_QUEUE: z.coerce.number().int().min(1).default(500),
  JOB_LEASE_MS: z.coerce.number().int().min(1000).default(120_000),
  JOB_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  JOB_POLL_MS: z.coerce.number().int().min(10).default(1000),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'must be comma-separated seconds, e.g. 5,300,1800')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((v) => v.split(',').map((n) => Math.round(Number(n) * 1000))),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  SMTP_URL: z.string().optional(),
  SMTP_FROM: z.string().default('Voxkey <alerts@voxkey.invalid>'),
  ALERT_MIN_VERIFICATIONS: z.coerce.number().int().min(1).default(20),
  ALERT_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0.5),
  ALERT_COOLDOWN_HOURS: z.coerce.number().min(0).default(6),
  /** match_score at or above which a verification is `verified` (the spec's "strong match" level). */
  MATCH_THRESHOLD: z.coerce.number().gt(0).lt(1).default(0.85),
  RUN_WORKERS: booleanFromEnv.default(true),
  /** Longest time a client may take to send a whole request (slow uploads are cut off with 408). */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  RATE_LIMIT_ENABLED: booleanFromEnv.default(true),
  RATE_LIMIT_TOKEN_RPS: z.coerce.number().positive().default(20),
  RATE_LIMIT_TOKEN_BURST: z.coerce.number().int().min(1).default(50),
  RATE_LIMIT_ORG_RPS: z.coerce.number().positive().default(50),
  RATE_LIMIT_ORG_BURST: z.coerce.number().int().min(1).default(100),
  RATE_LIMIT_TRIAL_RPS: z.coerce.number().positive().default(5),
  RATE_LIMIT_TRIAL_BURST: z.coerce.number().int().min(1).default(20),
  METRICS_ENABLED: booleanFromEnv.default(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type AppConfig = z.infer<typeof ConfigSchema> & { isDevelopment: boolean };

export class ConfigError extends Error {}

/** Parses the environment once at start-up; throws a ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return { ...parsed.data, isDevelopment: parsed.data.NODE_ENV !== 'production' };
}

export function ensureDataDir(config: AppConfig): string {
  const dir = path.resolve(config.DATA_DIR);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  return dir;
}
