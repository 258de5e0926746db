import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../src/db/connection.js';
import { startWalCheckpointer } from '../src/db/wal-checkpointer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tempFile() {
  const dir = mkdtempSync(path.join(tmpdir(), 'voxkey-wal-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'voxkey.db');
}

// Any dialect's run: these open SQLite files of their own.
describe('SQLite WAL checkpoints on their own thread', () => {
  it('the connection never checkpoints on commit; the thread copies the log into the file', async () => {
    const file = tempFile();
    const database = openDatabase(`sqlite:${file}`);
    const db = database.db;
    const setting = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
      db,
    );
    expect(setting.rows[0]!.wal_autocheckpoint).toBe(0);

    await sql`create table recordings (id integer primary key, audio blob not null)`.execute(db);
    const sizeBefore = statSync(file).size;
    // 2,000 pages: past the 1,000-page point where SQLite would checkpoint inside a commit.
    for (let i = 0; i < 50; i++)
      await sql`insert into recordings (audio) values (${Buffer.alloc(160_000, i)})`.execute(db);
    const deadline = Date.now() + 5000;
    while (statSync(file).size < sizeBefore + 50 * 160_000 && Date.now() < deadline)
      await sleep(50);
    expect(statSync(file).size).toBeGreaterThanOrEqual(sizeBefore + 50 * 160_000);

    await database.close();
    // The last connection to close checkpoints what is left and removes the log.
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('reports a thread that cannot checkpoint, so the connection can go back to SQLite checkpointing', async () => {
    const failure = await new Promise<string>((resolve) => {
      const checkpointer = startWalCheckpointer(
        path.join(tempFile(), 'missing-dir', 'x.db'),
        resolve,
      );
      onTestFinished(() => checkpointer.stop());
    });
    expect(failure).toMatch(/directory|open/i);
  });

  it('an in-memory database has no log and no thread', async () => {
    const database = openDatabase('sqlite::memory:');
    const setting = await sql<{
      wal_autocheckpoint: number;
    }>`pragma wal_autocheckpoint`.execute(database.db);
    expect(setting.rows[0]!.wal_autocheckpoint).toBe(1000);
    await database.close();
  });
});
