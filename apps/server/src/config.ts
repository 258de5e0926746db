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
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:|postgres:\/\/|postgresql:\/\/)/, 'must start with sqlite: or postgres://')
    .default('sqlite:./data/voxkey.db'),
  DATA_DIR: z.string().default('./data'),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(15 * 1024 * 1024),
  BOOTSTRAP_DEMO_ORG: booleanFromEnv.default(true),
  PUBLIC_BASE_URL: z.string().url().optional(),
  WEBHOOK_ALLOW_LOOPBACK: booleanFromEnv.default(false),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: booleanFromEnv.default(false),
  DOCS_SCRIPT_URL: z.string().optional(),
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
