import type { Kysely } from 'kysely';

/**
 * Issue 31: each voiceprint sample keeps its enrolment recording's measured quality (JSON: speech, SNR,
 * bandwidth, codec holes, reverberation), which the speaker model's calibration weighs against the probe's;
 * samples stored before keep null and the calibration uses a neutral enrolment quality for them. Each job
 * records its recording's measured quality too (the request record's and the events' recording_quality).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('voiceprint_samples').addColumn('recording_quality', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('recording_quality', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('recording_quality').execute();
  await db.schema.alterTable('voiceprint_samples').dropColumn('recording_quality').execute();
}
