/**
 * A real Voxkey server (apps/server, built) as a child process for the SDK's tests against a server:
 * a fresh SQLite database, the engine's tiny fixture models (scores are meaningless; the protocol is
 * what is tested), one organisation created with the CLI, on a free loopback port.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { prerequisite } from '../../../../scripts/test-prerequisites.mjs';

const cli = fileURLToPath(new URL('../../../../apps/server/bin/voxkey.js', import.meta.url));
const fixtureModels = fileURLToPath(
  new URL('../../../engine/test/fixtures/models', import.meta.url),
);

/** Whether apps/server is built (`npm run build` in the repository root); the tests that need it skip otherwise. */
export const SERVER_BUILT = existsSync(
  fileURLToPath(new URL('../../../../apps/server/dist/main.js', import.meta.url)),
);

/** Whether `tests` in `testFile` can run: the server is built; otherwise the skip is recorded (scripts/test-prerequisites.mjs). */
export const serverBuiltFor = (testFile: string, tests: string) =>
  prerequisite({
    testFile,
    tests,
    missing: 'the built server, apps/server/dist (`npm run build` in the repository root)',
    present: SERVER_BUILT,
  });

/** The engine's espeak-ng speech clips (16 kHz mono 16-bit WAV, committed): speech the VAD detects, no data set needed. */
export const ENGINE_SPEECH_CLIPS = fileURLToPath(
  new URL('../../../engine/test/fixtures/audio/', import.meta.url),
);

export interface VoxkeyServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  token: string;
  orgId: number;
  output(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function parseCliJson(stdout: string): any {
  const lines = stdout.split('\n');
  return JSON.parse(lines.slice(lines.indexOf('{'), lines.lastIndexOf('}') + 1).join('\n'));
}

/** `voxkey org create`, then `voxkey serve`; resolves once /healthz answers. */
export async function startVoxkeyServer(
  name: string,
  extraEnv: Record<string, string> = {},
  { email }: { email?: string } = {},
): Promise<VoxkeyServer> {
  const dir = await mkdtemp(join(tmpdir(), 'voxkey-sdk-server-'));
  const port = await freePort();
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    BOOTSTRAP_DEMO_ORG: 'false',
    DATA_DIR: dir,
    VOXKEY_ENCRYPTION_KEY: 'b'.repeat(64),
    VOXKEY_MODELS_DIR: fixtureModels,
    ENGINE_THREADS: '1',
    JOB_POLL_MS: '100',
    RATE_LIMIT_ENABLED: 'false',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    ...extraEnv,
  };
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      cli,
      'org',
      'create',
      '--name',
      name,
      '--email',
      email ?? `${slug}@example.com`,
      '--callback-url',
      'http://127.0.0.1:9/hook',
      '--json',
    ],
    { env },
  );
  const created = parseCliJson(stdout);
  const child: ChildProcess = spawn(process.execPath, [cli, 'serve'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server did not start within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    token: created.token.bearer,
    orgId: created.organisation.id,
    output: () => output,
    stop,
  };
}
