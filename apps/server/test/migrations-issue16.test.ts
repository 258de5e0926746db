import { Migrator, sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Database, openDatabase } from '../src/db/connection.js';
import { MIGRATIONS } from '../src/db/migrate.js';
import { TEST_DIALECT } from './support/database.js';
import { createPostgresDatabase } from './support/postgres.js';

async function emptyDatabase(): Promise<Database> {
  if (TEST_DIALECT === 'postgres') {
    const { url, drop } = await createPostgresDatabase();
    const database = openDatabase(url, { poolSize: 2 });
    onTestFinished(async () => {
      await database.close();
      await drop();
    });
    return database;
  }
  const database = openDatabase('sqlite::memory:');
  onTestFinished(() => database.close());
  return database;
}

const migrator = (database: Database) =>
  new Migrator({ db: database.db, provider: { getMigrations: async () => MIGRATIONS } });

describe(`migrations of issue 16 (${TEST_DIALECT})`, () => {
  it('webhook_test_events keeps existing deliveries and their constraints, and allows job-less ones; down restores NOT NULL', async () => {
    const database = await emptyDatabase();
    const { db } = database;
    const m = migrator(database);
    expect((await m.migrateTo('2026-11-21T1700_bytewise_text')).error).toBeUndefined();

    const t = '2026-11-20T10:00:00.000Z';
    const org = await sql<{
      id: number;
    }>`insert into organisations (name, email, created_at, updated_at) values ('Old', 'old@example.com', ${t}, ${t}) returning id`.execute(
      db,
    );
    const orgId = org.rows[0]!.id;
    const job = await sql<{
      id: number;
    }>`insert into jobs (org_id, kind, request_uuid, body_hash, external_id, language, status, attempts, run_after, created_at, updated_at)
      values (${orgId}, 'enrollment', 'u-1', 'h', 'e', 'en-UK', 'completed', 1, ${t}, ${t}, ${t}) returning id`.execute(
      db,
    );
    const jobId = job.rows[0]!.id;
    await sql`insert into webhook_deliveries (org_id, job_id, webhook_id, event_type, request_uuid, payload, status, attempts, next_attempt_at, last_status_code, created_at, updated_at)
      values (${orgId}, ${jobId}, 'msg_old', 'enrollment.completed', 'u-1', '{"a":1}', 'delivered', 2, null, 200, ${t}, ${t})`.execute(
      db,
    );
    const before = await db.selectFrom('webhook_deliveries').selectAll().execute();

    expect((await m.migrateToLatest()).error).toBeUndefined();
    expect(await db.selectFrom('webhook_deliveries').selectAll().execute()).toEqual(before);

    const jobless = (id: string) =>
      db
        .insertInto('webhook_deliveries')
        .values({
          org_id: orgId,
          job_id: null,
          webhook_id: id,
          event_type: 'webhook.test',
          request_uuid: id,
          payload: '{}',
          status: 'pending',
          attempts: 0,
          created_at: t,
          updated_at: t,
        })
        .execute();
    await jobless('msg_test_1');
    await jobless('msg_test_2');
    // Still unique per job and per webhook-id.
    await expect(jobless('msg_test_1')).rejects.toThrow();
    await expect(
      db
        .insertInto('webhook_deliveries')
        .values({
          org_id: orgId,
          job_id: jobId,
          webhook_id: 'msg_dup',
          event_type: 'enrollment.completed',
          request_uuid: 'u-1',
          payload: '{}',
          status: 'pending',
          attempts: 0,
          created_at: t,
          updated_at: t,
        })
        .execute(),
    ).rejects.toThrow();
    // Deliveries still go with their job and organisation.
    await db.deleteFrom('jobs').where('id', '=', jobId).execute();
    expect(
      (
        await db
          .selectFrom('webhook_deliveries')
          .select('webhook_id')
          .orderBy('webhook_id')
          .execute()
      ).map((r) => r.webhook_id),
    ).toEqual(['msg_test_1', 'msg_test_2']);

    expect((await m.migrateTo('2026-11-21T1700_bytewise_text')).error).toBeUndefined();
    expect(await db.selectFrom('webhook_deliveries').select('id').execute()).toEqual([]);
    await expect(
      sql`insert into webhook_deliveries (org_id, job_id, webhook_id, event_type, request_uuid, payload, status, attempts, created_at, updated_at)
      values (${orgId}, null, 'msg_x', 'webhook.test', 'x', '{}', 'pending', 0, ${t}, ${t})`.execute(
        db,
      ),
    ).rejects.toThrow();
  });

  it('idempotency_keys is unique per (organisation, key) and goes with its organisation', async () => {
    const database = await emptyDatabase();
    const { db } = database;
    expect((await migrator(database).migrateToLatest()).error).toBeUndefined();
    const t = new Date().toISOString();
    const orgs = await sql<{
      id: number;
    }>`insert into organisations (name, email, created_at, updated_at) values ('A', 'a@example.com', ${t}, ${t}), ('B', 'b@example.com', ${t}, ${t}) returning id`.execute(
      db,
    );
    const [a, b] = orgs.rows.map((r) => r.id);
    const key = (orgId: number) =>
      db
        .insertInto('idempotency_keys')
        .values({
          org_id: orgId,
          idempotency_key: 'k',
          request_fingerprint: 'f',
          status: 'in_progress',
          response_status: null,
          sealed_response: null,
          created_at: t,
          updated_at: t,
        })
        .execute();
    await key(a!);
    await key(b!);
    await expect(key(a!)).rejects.toThrow();
    await db.deleteFrom('organisations').where('id', '=', a!).execute();
    expect(
      (await db.selectFrom('idempotency_keys').select('org_id').execute()).map((r) => r.org_id),
    ).toEqual([b]);
  });
});
