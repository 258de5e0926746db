/**
 * Real `voxkey serve` processes for the benchmarks: a fresh SQLite file or PostgreSQL database,
 * the CLI for organisations and tokens, process RSS and open file descriptors from /proc.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(ROOT, 'apps/server/bin/voxkey.js');
export const FIXTURE_MODELS = path.join(ROOT, 'packages/engine/test/fixtures/models');
export const POSTGRES_ADMIN_URL =
  process.env.VOXKEY_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export type Dialect = 'sqlite' | 'postgres';

/** The bundled default models when `models/` has them, else the engine's fixture models. */
export function chooseModels(): {
  dir: string;
  which: string;
  speaker: string;
  spoof: string;
  sha256?: Record<string, string>;
} {
  const bundled = path.join(ROOT, 'models');
  try {
    const manifest = JSON.parse(readFileSync(path.join(bundled, 'manifest.json'), 'utf8'));
    const pick = (kind: string) =>
      manifest.models.find(
        (m: any) => m.kind === kind && m.default && existsSync(path.join(bundled, m.file)),
      );
    const speaker = pick('speaker');
    const spoof = pick('spoof');
    if (speaker && spoof) {
      return {
        dir: bundled,
        which: 'bundled default models (models/manifest.json)',
        speaker: speaker.name,
        spoof: spoof.name,
        sha256: { [speaker.name]: speaker.sha256, [spoof.name]: spoof.sha256 },
      };
    }
  } catch {
    // fall through to the fixtures
  }
  const manifest = JSON.parse(readFileSync(path.join(FIXTURE_MODELS, 'manifest.json'), 'utf8'));
  const name = (kind: string) =>
    manifest.models.find((m: any) => m.kind === kind && m.default)?.name ?? '?';
  return {
    dir: FIXTURE_MODELS,
    which:
      'engine fixture models (packages/engine/test/fixtures/models: random weights; no bundled default models are present)',
    speaker: name('speaker'),
    spoof: name('spoof'),
  };
}

export interface Environment {
  dialect: Dialect;
  databaseUrl: string;
  dataDir: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function createEnvironment(
  dialect: Dialect,
  extraEnv: Record<string, string> = {},
): Promise<Environment> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'voxkey-bench-'));
  let databaseUrl = `sqlite:${path.join(dataDir, 'voxkey.db')}`;
  let drop = async () => {};
  if (dialect === 'postgres') {
    const name = `voxkey_bench_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    drop = async () => {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  }
  return {
    dialect,
    databaseUrl,
    dataDir,
    env: {
      // Not production: production refuses loopback callback URLs (and WEBHOOK_ALLOW_LOOPBACK), and the
      // benchmarks' webhook receiver listens on 127.0.0.1. NODE_ENV changes nothing that is measured:
      // only the callback policy, the start-up checks and the default HOST (set by startServer).
      NODE_ENV: 'development',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      BOOTSTRAP_DEMO_ORG: 'false',
      VOXKEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      RATE_LIMIT_ENABLED: 'false',
      LOG_LEVEL: 'info',
      ...extraEnv,
    },
    cleanup: async () => {
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs the CLI of this build, or of `bin` (another build's bin/voxkey.js: its migrations, not this build's). */
export async function cli<T = any>(
  environment: Environment,
  args: string[],
  bin: string = BIN,
): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, [bin, ...args, '--json'], {
    env: { ...process.env, ...environment.env },
  });
  return JSON.parse(stdout) as T;
}

/**
 * A bench organisation (plan 4) made with the CLI, its callback URL set when given, and a live token for it.
 * The e-mail address and the token's name derive from `name`.
 */
export async function createBenchOrganisation(
  environment: Environment,
  name: string,
  callbackUrl?: string,
  bin?: string,
): Promise<{ orgId: number; bearer: string }> {
  const org = await cli(
    environment,
    [
      'org',
      'create',
      '--name',
      name,
      '--email',
      `${name.toLowerCase()}@example.com`,
      '--plan',
      '4',
      ...(callbackUrl ? ['--callback-url', callbackUrl] : []),
    ],
    bin,
  );
  const orgId: number = org.organisation.id;
  const live = await cli(
    environment,
    ['token', 'create', '--org', String(orgId), '--name', name.toLowerCase()],
    bin,
  );
  return { orgId, bearer: live.bearer };
}

export interface ServerProcess {
  baseUrl: string;
  pid: number;
  child: ChildProcess;
  logFile: string;
  stop(): Promise<number | null>;
}

/** `voxkey serve` on a free port, its logs (JSON lines) to a file as an operator would; resolves once it listens. */
export async function startServer(
  environment: Environment,
  extraEnv: Record<string, string> = {},
  label = 'server',
  nodeArgs: string[] = [],
  bin = BIN,
): Promise<ServerProcess> {
  if (!existsSync(path.join(ROOT, 'apps/server/dist/main.js')))
    throw new Error('Build first: npm run build');
  const logFile = path.join(environment.dataDir, `${label}-${Date.now()}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve'], {
    env: { ...process.env, ...environment.env, PORT: '0', HOST: '127.0.0.1', ...extraEnv },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    const match = /listening on (http:\/\/[^\s"]+:\d+)/.exec(log);
    if (match) {
      return {
        baseUrl: match[1]!.replace('localhost', '127.0.0.1'),
        pid: child.pid!,
        child,
        logFile,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          return exited;
        },
      };
    }
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${log}`);
    if (Date.now() > deadline) throw new Error(`server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resident set size of a process in MiB (VmRSS). */
export function rssMiB(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU seconds a process has used so far (/proc/<pid>/stat), null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis are fixed.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * CPU seconds used so far by every PostgreSQL server process on this machine (its backends, the
 * checkpointer, the WAL writer): the database shares the cores with the server under test. A backend
 * that exits takes its seconds with it, so read this around a window in which the pool stays open.
 */
export function databaseServerCpuSeconds(): number {
  let seconds = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    seconds += cpuSeconds(Number(entry)) ?? 0;
  }
  return seconds;
}

/**
 * CPU seconds by thread of a process: the main thread (its id is the process id) and every other thread
 * (worker threads, which run the engine, and libuv's pool), from /proc/<pid>/task/<tid>/stat.
 */
export function threadCpuSeconds(pid: number): { main: number; others: number } | null {
  try {
    let main = 0;
    let others = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        .split(') ')[1]!
        .split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
      if (Number(tid) === pid) main += seconds;
      else others += seconds;
    }
    return { main, others };
  } catch {
    return null;
  }
}

export function openFds(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

export function machine() {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    node: process.version,
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarise(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    min: round(sorted[0] ?? NaN),
    max: round(sorted[sorted.length - 1] ?? NaN),
  };
}

export function argValue(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(name);
  if (i >= 0 && process.argv[i + 1] && !process.argv[i + 1]!.startsWith('--'))
    return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`${name}=`));
  return eq ? eq.slice(name.length + 1) : fallback;
}

export const hasFlag = (name: string) => process.argv.includes(name);
export const today = () => new Date().toISOString().slice(0, 10);

/** Writes a report to bench/results/<name>.json and says where. */
export function writeResult(name: string, report: unknown): void {
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${path.relative(ROOT, file)}`);
}

/** Runs a benchmark's main: an error is printed and the process exits with 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
