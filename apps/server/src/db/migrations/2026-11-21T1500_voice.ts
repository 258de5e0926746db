import { type Kysely, sql } from 'kysely';
import { withId, withTimestamps } from './schema-helpers.js';

export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable('jobs'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('request_uuid', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('external_id', 'text', (c) => c.notNull())
      .addColumn('language', 'text', (c) => c.notNull())
      .addColumn('device_fingerprint', 'text')
      .addColumn('device_type', 'integer')
      .addColumn('audio', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('run_after', 'text', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('user_id', 'integer')
      .addColumn('result', 'text')
      .addColumn('match_score', 'real')
      .addColumn('deepfake_detected', 'integer')
      .addColumn('quality_score', 'real')
      .addColumn('failure_reason', 'text')
      .addColumn('device_mismatch', 'integer')
      .addColumn('latency_ms', 'integer')
      .addColumn('completed_at', 'text')
      .addUniqueConstraint('jobs_org_request_unique', ['org_id', 'request_uuid']),
  ).execute();
  await db.schema
    .createIndex('jobs_claim_idx')
    .on('jobs')
    .columns(['status', 'run_after'])
    .execute();
  await db.schema
    .createIndex('jobs_org_kind_created_idx')
    .on('jobs')
    .columns(['org_id', 'kind', 'created_at'])
    .execute();
  // At most one enrolment in flight per external_id: the database, not the code, settles races.
  await db.schema
    .createIndex('jobs_one_enrolment_in_flight')
    .on('jobs')
    .columns(['org_id', 'external_id'])
    .unique()
    .where(sql.ref('kind'), '=', 'enrollment')
    .where(sql.ref('status'), 'in', ['queued', 'processing'])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable('voiceprints'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) =>
        c.notNull().unique().references('users.id').onDelete('cascade'),
      )
      .addColumn('model_id', 'text', (c) => c.notNull())
      .addColumn('sealed_embedding', 'text', (c) => c.notNull())
      .addColumn('enrolment_fingerprint', 'text')
      .addColumn('quality_score', 'real'),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable('webhook_secrets'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('sealed_secret', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text'),
  ).execute();
  await db.schema
    .createIndex('webhook_secrets_org_idx')
    .on('webhook_secrets')
    .column('org_id')
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable('webhook_deliveries'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('job_id', 'integer', (c) =>
        c.notNull().unique().references('jobs.id').onDelete('cascade'),
      )
      .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('request_uuid', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'text'),
  ).execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_org_idx')
    .on('webhook_deliveries')
    .column('org_id')
    .execute();

  await db.schema
    .alterTable('organisation_settings')
    .addColumn('last_failure_alert_at', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('organisation_settings').dropColumn('last_failure_alert_at').execute();
  for (const table of ['webhook_deliveries', 'webhook_secrets', 'voiceprints', 'jobs'])
    await db.schema.dropTable(table).execute();
}
