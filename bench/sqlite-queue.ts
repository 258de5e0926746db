/**
 * `npm run bench:sqlite-queue` — what one queued 5 s WAV costs SQLite on the thread that commits, in the
 * queue's statement pattern (store, claim, read, complete), by row layout and checkpoint mode.
 *
 *   tsx bench/sqlite-queue.ts [--jobs 400] [--bytes 160000]
 *
 * Layouts: `inline` keeps the recording in the job row (before 2026-11-30: the claim's update changes
 * the record's size, so SQLite writes it whole again, and `secure_delete` zeroes the old copy);
 * `split` keeps it in a table of its own (`job_recordings`, today). Checkpoints: `on-commit` is
 * SQLite's default (the commit that crosses 1,000 logged pages copies the log into the file);
 * `off-thread` leaves them to another thread (`wal-checkpointer.ts`; not run here, so the log grows,
 * as it would between two of that thread's passes). Plain SQL of the same shape as the server's
 * statements, WAL, `secure_delete = ON`, on a file in the OS temp directory. Per job: the committing
 * thread's wall time (mean, p50, p99, max) and CPU time. Writes bench/results/sqlite-queue-<date>.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { argValue, machine, runBench, today, writeResult } from './lib/server.js';

const JOBS = Number(argValue('--jobs', '400'));
const BYTES = Number(argValue('--bytes', '160000'));

type Layout = 'inline' | 'split';
type Checkpoints = 'on-commit' | 'off-thread';

const JOBS_TABLE = `create table jobs (id integer primary key, org_id integer not null, request_uuid text not null,
  status text not null, lease_owner text, lease_expires_at text, attempts integer not null, result text,
  match_score real, audio blob, created_at text not null, updated_at text not null)`;

function queueCycle(db: SQLite.Database, layout: Layout, recording: Buffer, i: number) {
  const now = new Date().toISOString();
  db.transaction(() => {
    const job = db
      .prepare(
        `insert into jobs (org_id, request_uuid, status, attempts, audio, created_at, updated_at)
         values (1, ?, 'queued', 0, ?, ?, ?) returning id`,
      )
      .get(`request-${i}`, layout === 'inline' ? recording : null, now, now) as { id: number };
    if (layout === 'split')
      db.prepare('insert into job_recordings (job_id, audio) values (?, ?)').run(job.id, recording);
  })();
  const claimed = db
    .prepare(
      `update jobs set status = 'processing', lease_owner = 'worker-1', lease_expires_at = ?,
       attempts = attempts + 1, updated_at = ?
       where id = (select id from jobs where status = 'queued' order by id limit 1) returning id`,
    )
    .get(now, now) as { id: number };
  if (layout === 'split')
    db.prepare('select audio from job_recordings where job_id = ?').get(claimed.id);
  db.transaction(() => {
    db.prepare(
      `update jobs set status = 'completed', lease_owner = null, lease_expires_at = null,
       result = 'verified', match_score = 0.99, updated_at = ?${layout === 'inline' ? ', audio = null' : ''}
       where id = ?`,
    ).run(now, claimed.id);
    if (layout === 'split')
      db.prepare('delete from job_recordings where job_id = ?').run(claimed.id);
  })();
}

function run(layout: Layout, checkpoints: Checkpoints, recording: Buffer) {
  const dir = mkdtempSync(path.join(tmpdir(), 'voxkey-sqlite-queue-'));
  const db = new SQLite(path.join(dir, 'queue.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('secure_delete = ON');
    if (checkpoints === 'off-thread') db.pragma('wal_autocheckpoint = 0');
    db.exec(JOBS_TABLE);
    if (layout === 'split')
      db.exec('create table job_recordings (job_id integer primary key, audio blob not null)');
    for (let i = 0; i < 20; i++) queueCycle(db, layout, recording, i);
    const wall: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (let i = 20; i < 20 + JOBS; i++) {
      const t0 = performance.now();
      queueCycle(db, layout, recording, i);
      wall.push(performance.now() - t0);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const sorted = [...wall].sort((a, b) => a - b);
    const at = (q: number) =>
      round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
    return {
      layout,
      checkpoints,
      jobs: JOBS,
      wallMsPerJob: {
        mean: round(wall.reduce((a, b) => a + b, 0) / wall.length),
        p50: at(0.5),
        p99: at(0.99),
        max: round(sorted.at(-1)!),
      },
      cpuMsPerJob: round((cpu.user + cpu.system) / 1000 / JOBS),
    };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (x: number) => Math.round(x * 100) / 100;

async function main() {
  const recording = randomBytes(BYTES);
  const machineAtStart = machine();
  const results = [];
  // Twice each, alternating, so a noisy moment does not favour one configuration.
  for (let pass = 0; pass < 2; pass++)
    for (const layout of ['inline', 'split'] as const)
      for (const checkpoints of ['on-commit', 'off-thread'] as const) {
        const r = run(layout, checkpoints, recording);
        results.push({ pass, ...r });
        console.log(
          `${layout} / ${checkpoints}: wall per job mean ${r.wallMsPerJob.mean} ms, p50 ${r.wallMsPerJob.p50}, p99 ${r.wallMsPerJob.p99}, max ${r.wallMsPerJob.max}; CPU ${r.cpuMsPerJob} ms`,
        );
      }
  writeResult(`sqlite-queue-${today()}`, {
    benchmark: 'sqlite-queue',
    command: `npm run bench:sqlite-queue -- ${process.argv.slice(2).join(' ')}`,
    recordingBytes: BYTES,
    machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
    results,
  });
}

runBench(main);
