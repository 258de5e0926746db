import { type Kysely, sql } from 'kysely';
import { doubleType } from './schema-helpers.js';

/**
 * Issue 25: enrolments get their own deepfake threshold (the spoof model's enrolment default refuses
 * only when the detector is very sure). An organisation that had set deepfake_threshold keeps it for
 * enrolments too, so its enrolment gate does not change under it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('organisation_settings')
    .addColumn('enrollment_deepfake_threshold', doubleType(db))
    .execute();
  await sql`update organisation_settings set enrollment_deepfake_threshold = deepfake_threshold where deepfake_threshold is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('organisation_settings')
    .dropColumn('enrollment_deepfake_threshold')
    .execute();
}
