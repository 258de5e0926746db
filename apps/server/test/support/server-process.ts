import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPostgresDatabase } from './postgres.js';
import { TEST_DIALECT } from './database.js';

/** The built `voxkey` command. */
export const BIN = fileURLToPath(new URL('../../bin/voxkey.js', import.meta.url));
/** The repository's bundled models (models/), for tests whose assertions need real scores. */
export const REPO_MODELS = fileURLToPath(new URL('../../../../models', import.meta.url));
export const ENGINE_FIXTURE_MODELS = fileURLToPath(
  new URL('../../../../packages/engine/test/fixtures/models', import.meta.url),
);

/** Every child still running; killed when the test process exits, so a timed-out test leaves no server behind. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface ServerEnvironment {
  env: Record<string, string>;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** A database in the test dialect plus a data directory, shared by the server processes of one test file. */
export async function createServerEnvironment(
  extraEnv: Record<string, string> = {},
): Promise<ServerEnvironment> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'voxkey-e2e-'));
  let databaseUrl = `sqlite:${path.join(dataDir, 'voxkey.db')}`;
  let drop = async () => {};
  if (TEST_DIALECT === 'postgres') {
    const created = await createPostgresDatabase();
    databaseUrl = created.url;
    drop = created.drop;
  }
  return {
    dataDir,
    env: {
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      BOOTSTRAP_DEMO_ORG: 'false',
      VOXKEY_ENCRYPTION_KEY: 'a'.repeat(64),
      VOXKEY_MODELS_DIR: ENGINE_FIXTURE_MODELS,
      ENGINE_THREADS: '1',
      JOB_POLL_MS: '100',
      WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2',
      RATE_LIMIT_ENABLED: 'false',
      LOG_LEVEL: 'info',
      ...extraEnv,
    },
    cleanup: drop,
  };
}

export async function runCli<T = any>(environment: ServerEnvironment, args: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, ...args, '--json'], {
    env: { ...process.env, ...environment.env },
  });
  return JSON.parse(stdout) as T;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** One JSON call to a running server's API with a bearer token (the body parsed when there is one). */
export async function callApi(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export interface ServerProcess {
  /** The API base URL (`.../v1`) of `serve`; the health origin (no `/v1`) of `worker`. */
  baseUrl: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** Starts `voxkey serve` on a free port and resolves once it listens. */
export function startServerProcess(
  environment: ServerEnvironment,
  extraEnv: Record<string, string> = {},
): Promise<ServerProcess> {
  return startProcess(environment, 'serve', /listening on (http:\/\/[^\s"]+:\d+)/, extraEnv);
}

/** Starts `voxkey worker` (jobs and webhooks; health on a free WORKER_PORT) and resolves once it runs. */
export function startWorkerProcess(
  environment: ServerEnvironment,
  extraEnv: Record<string, string> = {},
): Promise<ServerProcess> {
  return startProcess(
    environment,
    'worker',
    /worker running[^\n]*?health on (http:\/\/[^\s"]+:\d+)/,
    { WORKER_PORT: '0', ...extraEnv },
    '',
  );
}

function startProcess(
  environment: ServerEnvironment,
  command: string,
  ready: RegExp,
  extraEnv: Record<string, string>,
  basePath = '/v1',
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, command], {
    env: { ...process.env, ...environment.env, PORT: '0', HOST: '127.0.0.1', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          baseUrl: match[1] ? `${match[1].replace('localhost', '127.0.0.1')}${basePath}` : '',
          child,
          output: () => output,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
          kill: async () => {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}
