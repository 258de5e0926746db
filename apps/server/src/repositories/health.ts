import { sql } from 'kysely';
import type { Executor } from '../db/connection.js';

/** Throws when the database does not answer. */
export async function pingDatabase(db: Executor): Promise<void> {
  await sql`select 1`.execute(db);
}
