import { execSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import pg from 'pg';

export const POSTGRES_ADMIN_URL =
  process.env.VOXKEY_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function canConnect(): Promise<boolean> {
  const client = new pg.Client({
    connectionString: POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Starts the machine's PostgreSQL cluster when it is not answering (CI and fresh machines). */
export async function ensurePostgresRunning(): Promise<void> {
  if (await canConnect()) return;
  const version = readdirSync('/etc/postgresql')[0];
  if (!version) throw new Error('PostgreSQL is not installed (/etc/postgresql is empty)');
  execSync(`pg_ctlcluster --skip-systemctl-redirect ${version} main start`, { stdio: 'inherit' });
  for (let i = 0; i < 30; i++) {
    if (await canConnect()) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`PostgreSQL did not come up at ${POSTGRES_ADMIN_URL}`);
}

export async function createPostgresDatabase(): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  const name = `voxkey_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  // Test data need not survive a crash of the test cluster; this makes each commit several times cheaper.
  await admin.query(`alter database ${name} set synchronous_commit = off`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
