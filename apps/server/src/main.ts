import { orgCreate, tokenCreate } from './cli/org.js';
import { UsageError } from './cli/output.js';
import { type AppConfig, ConfigError, ensureDataDir, loadConfig } from './config.js';
import { type Database, openDatabase } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';
import { startServer } from './serve.js';

const USAGE = `Usage: voxkey <command>

Commands:
  serve                                   start the API server (default)
  migrate                                 bring the database schema up to date
  org create --name N --email E [--plan ID] [--callback-url URL] [--json]
  token create --org ID --name N [--expires-at ISO] [--json]

Environment: DATABASE_URL (sqlite:./data/voxkey.db or postgres://...), PORT (8080), see README.`;

async function withDatabase<T>(config: AppConfig, run: (database: Database) => Promise<T>): Promise<T> {
  if (config.DATABASE_URL.startsWith('sqlite:')) ensureDataDir(config);
  const database = openDatabase(config.DATABASE_URL);
  try {
    await migrateToLatest(database.db);
    return await run(database);
  } finally {
    await database.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command = 'serve', sub, ...rest] = argv;
  try {
    if (command === 'help' || command === '--help' || command === '-h') {
      console.log(USAGE);
      return 0;
    }
    const config = loadConfig();
    switch (command) {
      case 'serve':
        await withDatabase(config, (database) => startServer(database, config));
        return 0;
      case 'migrate':
        await withDatabase(config, async () => console.log('Database schema is up to date.'));
        return 0;
      case 'org':
        if (sub !== 'create') throw new UsageError(USAGE);
        await withDatabase(config, (database) => orgCreate(rest, database, config));
        return 0;
      case 'token':
        if (sub !== 'create') throw new UsageError(USAGE);
        await withDatabase(config, (database) => tokenCreate(rest, database));
        return 0;
      default:
        throw new UsageError(`Unknown command '${command}'.\n\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    if (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    console.error(err);
    return 1;
  }
}
