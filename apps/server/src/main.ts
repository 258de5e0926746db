import { isEngineError } from '@voxkey/engine';
import { billingClosePeriod, modelsPull } from './cli/operations.js';
import { orgCreate, tokenCreate } from './cli/org.js';
import { UsageError } from './cli/output.js';
import { type AppConfig, ConfigError, loadConfig, productionProblems } from './config.js';
import { createLogger } from './observability/logger.js';
import { createRuntime, type Runtime } from './runtime.js';
import { startServer, startWorker } from './serve.js';

const USAGE = `Usage: voxkey <command>

Commands:
  serve                                   start the API server (with in-process workers unless RUN_WORKERS=false)
  worker                                  run jobs and webhook deliveries only (scale inference separately)
  migrate                                 bring the database schema up to date
  org create --name N --email E [--plan ID] [--callback-url URL] [--json]
  token create --org ID --name N [--expires-at ISO] [--json]
  billing close-period --month YYYY-MM [--json]
  models pull <name>                      download a model listed in models/manifest.json and verify its sha256

Environment: DATABASE_URL (sqlite:./data/voxkey.db or postgres://...), PORT (8080); see docs/deployment.md.`;

async function withRuntime<T>(config: AppConfig, run: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = await createRuntime(config, { withWorkers: false, logger: createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 2) });
  try {
    return await run(runtime);
  } finally {
    await runtime.close();
  }
}

function refuseUnsafeProduction(config: AppConfig): void {
  const problems = productionProblems(config);
  if (problems.length > 0) throw new ConfigError(`Refusing to start with NODE_ENV=production:\n${problems.map((p) => `  ${p}`).join('\n')}`);
}

export async function main(argv: string[]): Promise<number> {
  const [command = 'serve', sub, ...rest] = argv;
  try {
    if (command === 'help' || command === '--help' || command === '-h') {
      console.log(USAGE);
      return 0;
    }
    const config = loadConfig();
    switch (`${command} ${sub ?? ''}`.trim()) {
      case 'serve':
        refuseUnsafeProduction(config);
        await startServer(config);
        return 0;
      case 'worker':
        refuseUnsafeProduction(config);
        await startWorker(config);
        return 0;
      case 'migrate':
        await withRuntime(config, async () => console.log('Database schema is up to date.'));
        return 0;
      case 'org create':
        await withRuntime(config, (rt) => orgCreate(rest, rt.deps.database, config, rt.deps.sealer));
        return 0;
      case 'token create':
        await withRuntime(config, (rt) => tokenCreate(rest, rt.deps.database));
        return 0;
      case 'billing close-period':
        await withRuntime(config, (rt) => billingClosePeriod(rest, rt, config));
        return 0;
      case 'models pull':
        await modelsPull(rest, config);
        return 0;
      default:
        throw new UsageError(`Unknown command '${argv.join(' ')}'.\n\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    if (isEngineError(err)) {
      console.error(`${err.code}: ${err.message}`);
      return 1;
    }
    if (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    console.error(err);
    return 1;
  }
}
