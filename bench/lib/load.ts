/** autocannon runs with our own latency record (p50/p95/p99 of every response), and user seeding. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { cpuSeconds, type Environment, ROOT, rssMiB, summarise } from './server.js';

export interface LoadResult {
  scenario: string;
  durationSeconds: number;
  connections: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  statusCounts: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  rssMiB?: { before: number | null; after: number | null };
  /** The server process's own CPU time (user + system) per answered request, in microseconds: less sensitive to other load than req/s. */
  serverCpuUsPerRequest?: number | null;
}

export async function runLoad(options: {
  scenario: string;
  url: string;
  durationSeconds: number;
  connections?: number;
  headers?: Record<string, string>;
  requests?: any[];
  method?: string;
  body?: string;
  serverPid?: number;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  const before = options.serverPid ? rssMiB(options.serverPid) : null;
  const cpuBefore = options.serverPid ? cpuSeconds(options.serverPid) : null;
  const config: Record<string, unknown> = {
    url: options.url,
    connections: options.connections ?? 10,
    duration: options.durationSeconds,
  };
  if (options.headers) config.headers = options.headers;
  if (options.method) config.method = options.method;
  if (options.body !== undefined) config.body = options.body;
  if (options.requests) config.requests = options.requests;
  const instance = autocannon(config as any);
  instance.on(
    'response',
    (_client: unknown, _status: number, _bytes: number, responseTime: number) =>
      latencies.push(responseTime),
  );
  const result: any = await instance;
  const lat = summarise(latencies);
  const statusCounts = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, v]: [string, any]) => [code, v.count]),
  );
  const total = latencies.length;
  const cpuAfter = options.serverPid ? cpuSeconds(options.serverPid) : null;
  const serverCpuUsPerRequest =
    cpuBefore !== null && cpuAfter !== null && total > 0
      ? Math.round(((cpuAfter - cpuBefore) / total) * 1e7) / 10
      : null;
  return {
    scenario: options.scenario,
    durationSeconds: options.durationSeconds,
    connections: options.connections ?? 10,
    requests: total,
    requestsPerSecond: Math.round((total / options.durationSeconds) * 10) / 10,
    latencyMs: { p50: lat.p50, p95: lat.p95, p99: lat.p99, max: lat.max },
    statusCounts,
    non2xx: result.non2xx ?? 0,
    errors: result.errors ?? 0,
    timeouts: result.timeouts ?? 0,
    ...(options.serverPid
      ? { rssMiB: { before, after: rssMiB(options.serverPid) }, serverCpuUsPerRequest }
      : {}),
  };
}

/** Users have no create endpoint (enrolment creates them), so the list scenario's rows are inserted directly. */
export async function seedUsers(
  environment: Environment,
  orgId: number,
  count: number,
): Promise<void> {
  const now = new Date().toISOString();
  if (environment.dialect === 'sqlite') {
    const db = new Database(environment.databaseUrl.slice('sqlite:'.length));
    db.pragma('busy_timeout = 5000');
    const insert = db.prepare(
      'insert into users (org_id, external_id, is_active, created_at, updated_at) values (?, ?, 1, ?, ?)',
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(orgId, `seeded-${i}`, now, now);
    })();
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: environment.databaseUrl });
  await client.connect();
  for (let i = 0; i < count; i++) {
    await client.query(
      'insert into users (org_id, external_id, is_active, created_at, updated_at) values ($1, $2, 1, $3, $3)',
      [orgId, `seeded-${i}`, now],
    );
  }
  await client.end();
}

/** The bare Hono baseline in its own `node` process. */
export async function startBareServer(): Promise<{
  url: string;
  pid: number;
  stop(): void;
  child: ChildProcess;
}> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bench/lib/bare-server.mjs')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`bare server exited ${code}`)));
  });
  return { url, pid: child.pid!, child, stop: () => child.kill('SIGTERM') };
}
