import type { Kysely } from 'kysely';
import { doubleType, withId, withTimestamps } from './schema-helpers.js';

const SEEDED_PLANS = [
  { name: 'Sandbox', monthly_calls_included: 100, overage_rate_gbp: 0, trial_days: 15 },
  { name: 'Starter', monthly_calls_included: 5_000, overage_rate_gbp: 0.02, trial_days: 30 },
  { name: 'Growth', monthly_calls_included: 50_000, overage_rate_gbp: 0.012, trial_days: 60 },
  { name: 'Enterprise', monthly_calls_included: 500_000, overage_rate_gbp: 0.006, trial_days: 90 },
];

export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable('organisations'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('address', 'text')
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('phone_number', 'text')
      .addColumn('vat', 'text')
      .addColumn('vies', 'text'),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable('organisation_settings'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().unique().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('alert_on_failure', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('callback_url', 'text'),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable('api_tokens'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('friendly_name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'text'),
  ).execute();
  await db.schema.createIndex('api_tokens_org_idx').on('api_tokens').column('org_id').execute();

  await withTimestamps(
    withId(db, db.schema.createTable('plans'))
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('monthly_calls_included', 'integer', (c) => c.notNull())
      .addColumn('overage_rate_gbp', doubleType(db), (c) => c.notNull())
      .addColumn('trial_days', 'integer', (c) => c.notNull()),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable('subscriptions'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('plan_id', 'integer', (c) => c.notNull().references('plans.id'))
      .addColumn('start_date', 'text', (c) => c.notNull())
      .addColumn('end_date', 'text'),
  ).execute();
  await db.schema
    .createIndex('subscriptions_org_idx')
    .on('subscriptions')
    .column('org_id')
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable('invoices'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('sub_id', 'integer', (c) =>
        c.notNull().references('subscriptions.id').onDelete('cascade'),
      )
      .addColumn('invoice_sequence', 'integer', (c) => c.notNull())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('monthly_verifications', 'integer', (c) => c.notNull())
      .addColumn('overage_calls', 'integer', (c) => c.notNull())
      .addColumn('amount_gbp', doubleType(db), (c) => c.notNull())
      .addColumn('file_ref', 'text', (c) => c.notNull())
      .addUniqueConstraint('invoices_org_sequence_unique', ['org_id', 'invoice_sequence'])
      .addUniqueConstraint('invoices_sub_period_unique', ['sub_id', 'period']),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable('users'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('external_id', 'text', (c) => c.notNull())
      .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
      .addUniqueConstraint('users_org_external_unique', ['org_id', 'external_id']),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable('devices'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) =>
        c.notNull().references('users.id').onDelete('cascade'),
      )
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('type', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_used', 'text', (c) => c.notNull())
      .addUniqueConstraint('devices_user_fingerprint_unique', ['user_id', 'fingerprint']),
  ).execute();
  await db.schema.createIndex('devices_org_idx').on('devices').column('org_id').execute();

  await withTimestamps(
    withId(db, db.schema.createTable('predefined_texts'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('language', 'text', (c) => c.notNull())
      .addColumn('text_code', 'integer', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .addUniqueConstraint('predefined_texts_org_language_code_unique', [
        'org_id',
        'language',
        'text_code',
      ]),
  ).execute();

  const now = new Date().toISOString();
  await db
    .insertInto('plans')
    .values(SEEDED_PLANS.map((plan) => ({ ...plan, created_at: now, updated_at: now })))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'predefined_texts',
    'devices',
    'users',
    'invoices',
    'subscriptions',
    'plans',
    'api_tokens',
    'organisation_settings',
    'organisations',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
