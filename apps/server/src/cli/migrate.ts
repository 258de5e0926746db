import type { AppConfig } from '../config.js';
import { missingSqliteFile, openDatabase } from '../db/connection.js';
import { migrateToLatest, migrationStatus } from '../db/migrate.js';
import { type CliIo, printJson, printLine } from './output.js';

/** `voxkey migrate [--status]`: runs on its own connection, without the engine or the encryption key. */
export async function migrate(
  options: { status?: boolean; json?: boolean },
  config: AppConfig,
  io: CliIo,
): Promise<void> {
  // --status changes nothing: for a SQLite file that does not exist yet, an empty in-memory database
  // says the same (every migration pending) without creating the file.
  const url =
    options.status && missingSqliteFile(config.DATABASE_URL) ? 'sqlite:' : config.DATABASE_URL;
  const database = openDatabase(url, { poolSize: 1, preparedStatements: false });
  try {
    if (options.status) {
      const migrations = (await migrationStatus(database.db)).map((m) => ({
        name: m.name,
        executed_at: m.executedAt?.toISOString() ?? null,
      }));
      const pending = migrations.filter((m) => m.executed_at === null).length;
      if (options.json) return printJson(io, { migrations, pending });
      for (const m of migrations)
        printLine(
          io,
          `${m.executed_at ? 'applied' : 'pending'}\t${m.name}${m.executed_at ? `\t${m.executed_at}` : ''}`,
        );
      printLine(
        io,
        pending
          ? `${pending} migration(s) pending: run \`voxkey migrate\`.`
          : 'Database schema is up to date.',
      );
      return;
    }
    const applied = await migrateToLatest(database.db);
    if (options.json) return printJson(io, { applied });
    printLine(
      io,
      applied.length
        ? `Applied ${applied.length} migration(s): ${applied.join(', ')}.`
        : 'Database schema is up to date.',
    );
  } finally {
    await database.close();
  }
}
