import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isEngineError } from '@voxkey/engine';
import { Command, CommanderError } from 'commander';
import { type AppConfig, ConfigError, loadConfig, productionProblems } from '../config.js';
import { missingSqliteFile } from '../db/connection.js';
import { DatabaseStartError } from '../db/errors.js';
import { createLogger } from '../observability/logger.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { startServer, startWorker } from '../serve.js';
import { orgList, tokenDisable, tokenList } from './listing.js';
import { migrate } from './migrate.js';
import { billingClosePeriod, modelsPull } from './operations.js';
import { orgCreate, tokenCreate } from './org.js';
import { type CliIo, EXIT, NotFoundError, UsageError } from './output.js';
import { voiceprintModels } from './voiceprints.js';

/** `serve` and `worker` refuse an unsafe production configuration (exit 2, every problem listed). */
function safeForProduction(config: AppConfig): AppConfig {
  const problems = productionProblems(config);
  if (problems.length > 0)
    throw new ConfigError(
      `Refusing to start with NODE_ENV=production:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
  return config;
}

/** The server package's version, found from this file whether it runs bundled (dist/) or from src/. */
export function serverVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@voxkey/server' && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}

const JSON_HELP = 'print the result as JSON on stdout (errors as JSON on stderr)';

/**
 * The admin commands act on the server's database, so a SQLite file that does not exist is a mistake
 * (another directory: without DATABASE_URL it is ./data/voxkey.db in the current one; a container
 * without its volume): they refuse instead of creating an empty database and acting on that.
 * `org create` may create a database its DATABASE_URL names explicitly (an operator's first step).
 */
function existingDatabase(
  config: AppConfig,
  env: NodeJS.ProcessEnv,
  { mayCreateNamed }: { mayCreateNamed: boolean },
): AppConfig {
  const missing = missingSqliteFile(config.DATABASE_URL);
  if (!missing) return config;
  const named = env.DATABASE_URL !== undefined;
  if (named && mayCreateNamed) return config;
  throw new UsageError(
    `No Voxkey database at ${missing}` +
      (named
        ? ` (DATABASE_URL=${config.DATABASE_URL}). `
        : ': without DATABASE_URL the database is ./data/voxkey.db in the current directory. ') +
      'Run this command where the server runs (`npm start` runs in the repository root), point DATABASE_URL at its database, ' +
      'or create the database with `voxkey migrate` (a first `voxkey serve` does too).',
  );
}

async function withRuntime<T>(
  config: AppConfig,
  run: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  const runtime = await createRuntime(config, {
    withWorkers: false,
    logger: createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 2),
  });
  try {
    return await run(runtime);
  } finally {
    await runtime.close();
  }
}

/** The `voxkey` command tree. Actions read the configuration only when they run, so `--help` works without any. */
export function buildProgram(io: CliIo): Command {
  const config = () => loadConfig(io.env);
  /** The configuration of a command that works on an existing database. */
  const adminConfig = () => existingDatabase(config(), io.env, { mayCreateNamed: false });
  const program = new Command('voxkey')
    .description(
      'Voxkey voice-biometrics server and admin commands. Configuration comes from the environment (docs/deployment.md).',
    )
    .version(serverVersion(), '-V, --version', 'print the server version')
    .helpOption('-h, --help', 'show help for a command')
    .showSuggestionAfterError()
    .allowExcessArguments(false)
    .addHelpText(
      'after',
      `
Environment: DATABASE_URL (sqlite:./data/voxkey.db or postgres://...), PORT (8080), VOXKEY_ENCRYPTION_KEY, ...; see docs/deployment.md.
Exit codes: ${EXIT.ok} success, ${EXIT.failure} failure (database, engine, unexpected), ${EXIT.usage} usage or configuration error, ${EXIT.notFound} organisation or token not found.`,
    );

  program
    .command('serve')
    .description(
      'start the API server (with in-process job workers unless RUN_WORKERS=false); the default command',
    )
    .action(async () => startServer(safeForProduction(config())));

  program
    .command('worker')
    .description(
      'run jobs (inference) and webhook deliveries only, to scale them apart from the API (PostgreSQL)',
    )
    .action(async () => startWorker(safeForProduction(config())));

  program
    .command('migrate')
    .description(
      'bring the database schema up to date (every start does it too), or show which migrations have run',
    )
    .option('--status', 'list applied and pending migrations; changes nothing')
    .option('--json', JSON_HELP)
    .action(async (options: { status?: boolean; json?: boolean }) =>
      migrate(options, config(), io),
    );

  const org = program.command('org').description('organisations').helpCommand(false);
  org
    .command('create')
    .description(
      'create an organisation with settings, subscription, a trial token and a webhook secret (both shown once)',
    )
    .requiredOption('--name <name>', 'organisation name')
    .requiredOption('--email <email>', 'contact email')
    .option('--plan <id|name>', 'plan id or name, e.g. Starter (default: the Sandbox plan)')
    .option('--callback-url <url>', 'webhook callback URL')
    .option('--json', JSON_HELP)
    .action(async (options: unknown) => {
      const cfg = existingDatabase(config(), io.env, { mayCreateNamed: true });
      await withRuntime(cfg, (rt) => orgCreate(options, rt.deps.database, cfg, rt.deps.sealer, io));
    });
  org
    .command('list')
    .description('list every organisation (id, name, email, creation time)')
    .option('--json', JSON_HELP)
    .action(async (options: unknown) =>
      withRuntime(adminConfig(), (rt) => orgList(options, rt.deps.database, io)),
    );

  const token = program
    .command('token')
    .description("an organisation's API tokens")
    .helpCommand(false);
  token
    .command('create')
    .description('create a live API token (the bearer value is shown once)')
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--name <name>', 'friendly name')
    .option('--expires-at <iso>', 'expiry, an ISO 8601 date-time in the future (default: never)')
    .option('--json', JSON_HELP)
    .action(async (options: unknown) =>
      withRuntime(adminConfig(), (rt) => tokenCreate(options, rt.deps.database, io)),
    );
  token
    .command('list')
    .description("list an organisation's tokens (never their secrets)")
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', JSON_HELP)
    .action(async (options: unknown) =>
      withRuntime(adminConfig(), (rt) => tokenList(options, rt.deps.database, io)),
    );
  token
    .command('disable')
    .description(
      'disable a token: requests with it get 401 until it is enabled again through the API',
    )
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--token <id>', 'token id (see `voxkey token list`)')
    .option('--json', JSON_HELP)
    .action(async (options: unknown) =>
      withRuntime(adminConfig(), (rt) => tokenDisable(options, rt.deps.database, io)),
    );

  const billing = program.command('billing').description('billing').helpCommand(false);
  billing
    .command('close-period')
    .description('create the invoices of a month')
    .requiredOption('--month <YYYY-MM>', 'the month to invoice')
    .option('--json', JSON_HELP)
    .action(async (options: unknown) => {
      const cfg = adminConfig();
      await withRuntime(cfg, (rt) => billingClosePeriod(options, rt, cfg, io));
    });

  const models = program.command('models').description('model files').helpCommand(false);
  models
    .command('pull')
    .description('download a model listed in models/manifest.json and verify its sha256')
    .argument('<name>', 'model name from the manifest')
    .option('--json', JSON_HELP)
    .action(async (name: string, options: { json?: boolean }) =>
      modelsPull(name, options, config(), io),
    );

  const voiceprints = program.command('voiceprints').description('voiceprints').helpCommand(false);
  voiceprints
    .command('models')
    .description(
      'voiceprints per speaker model per organisation (which model scores them, how many are still upgrading)',
    )
    .option('--org <id>', 'one organisation (default: all)')
    .option('--json', JSON_HELP)
    .action(async (options: unknown) => {
      const cfg = adminConfig();
      await withRuntime(cfg, (rt) => voiceprintModels(options, rt.deps.database, cfg, io));
    });

  for (const command of [program, ...allSubcommands(program)]) {
    command.configureOutput({ writeOut: io.out, writeErr: io.err }).exitOverride();
  }
  return program;
}

function allSubcommands(command: Command): Command[] {
  return command.commands.flatMap((c) => [c, ...allSubcommands(c)]);
}

function reportError(io: CliIo, json: boolean, code: string, message: string): void {
  if (json) io.err(`${JSON.stringify({ error: { code, message } })}\n`);
  else io.err(`${message}\n`);
}

/** Runs one command line; resolves to the process exit code (see EXIT). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const json = argv.includes('--json');
  const program = buildProgram(io);
  if (json) {
    // Commander's own messages would not be JSON: report its errors below instead.
    for (const command of [program, ...allSubcommands(program)])
      command.configureOutput({ writeOut: io.out, writeErr: () => {} });
  }
  try {
    // No command at all is `serve` (what a container or `npm start` runs).
    await program.parseAsync(argv.length === 0 ? ['serve'] : argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version')
        return EXIT.ok;
      if (err.code === 'commander.help' && err.exitCode === 0) return EXIT.ok; // `voxkey help <command>`
      // A command group without a subcommand prints its help (commander.help) and is a usage error.
      if (json) reportError(io, true, 'usage', err.message.replace(/^error: /, ''));
      return EXIT.usage;
    }
    if (err instanceof UsageError || err instanceof ConfigError) {
      reportError(io, json, 'usage', err.message);
      return EXIT.usage;
    }
    if (err instanceof NotFoundError) {
      reportError(io, json, 'not_found', err.message);
      return EXIT.notFound;
    }
    if (err instanceof DatabaseStartError) {
      reportError(io, json, 'failure', err.message);
      return EXIT.failure;
    }
    if (isEngineError(err)) {
      reportError(io, json, err.code, `${err.code}: ${err.message}`);
      return EXIT.failure;
    }
    reportError(
      io,
      json,
      'failure',
      json
        ? String(err instanceof Error ? err.message : err)
        : String(err instanceof Error ? (err.stack ?? err.message) : err),
    );
    return EXIT.failure;
  }
}
