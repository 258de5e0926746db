import { type Kysely, sql } from 'kysely';
import { isPostgres, withId, withTimestamps } from './schema-helpers.js';

const COLUMNS = [
  'id',
  'org_id',
  'job_id',
  'webhook_id',
  'event_type',
  'request_uuid',
  'payload',
  'status',
  'attempts',
  'next_attempt_at',
  'lease_owner',
  'lease_expires_at',
  'last_status_code',
  'last_error',
  'delivered_at',
  'created_at',
  'updated_at',
];

/** webhook_deliveries as first created, with job_id nullable or not. */
function createDeliveries(db: Kysely<any>, name: string, jobIdNullable: boolean) {
  return withTimestamps(
    withId(db, db.schema.createTable(name))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('job_id', 'integer', (c) =>
        (jobIdNullable ? c : c.notNull()).unique().references('jobs.id').onDelete('cascade'),
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
}

/** SQLite cannot drop NOT NULL in place: the table is rebuilt (nothing references it) and its indexes recreated. */
async function rebuildOnSqlite(db: Kysely<any>, jobIdNullable: boolean): Promise<void> {
  await createDeliveries(db, 'webhook_deliveries_rebuilt', jobIdNullable);
  const columns = sql.join(COLUMNS.map((c) => sql.ref(c)));
  await sql`insert into webhook_deliveries_rebuilt (${columns}) select ${columns} from webhook_deliveries`.execute(
    db,
  );
  await db.schema.dropTable('webhook_deliveries').execute();
  await sql`alter table webhook_deliveries_rebuilt rename to webhook_deliveries`.execute(db);
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
}

/** A `webhook.test` delivery belongs to no job: job_id becomes nullable (still unique and cascading for jobs' events). */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db))
    await sql`alter table webhook_deliveries alter column job_id drop not null`.execute(db);
  else await rebuildOnSqlite(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('job_id', 'is', null).execute();
  if (isPostgres(db))
    await sql`alter table webhook_deliveries alter column job_id set not null`.execute(db);
  else await rebuildOnSqlite(db, false);
}
