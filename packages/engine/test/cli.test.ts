import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FIXTURE_MODELS } from './helpers.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

describe('voxkey-engine models CLI (built dist/cli.js)', () => {
  const env = { ...process.env, VOXKEY_MODELS_DIR: FIXTURE_MODELS };
  it('lists and verifies the manifest models', async () => {
    const list = await run(process.execPath, [CLI, 'models', 'list'], { env });
    expect(list.stdout).toMatch(/tiny-speaker\tspeaker\tbundled\tdefault\tpresent/);
    const verify = await run(process.execPath, [CLI, 'models', 'verify'], { env });
    expect(verify.stdout).toMatch(/^ok\ttiny-speaker/m);
  });
  it('verifies the files an entry names beside its model, and fails on a missing or altered one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxkey-cli-verify-'));
    for (const f of readdirSync(FIXTURE_MODELS))
      copyFileSync(join(FIXTURE_MODELS, f), join(dir, f));
    const manifestPath = join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      models: Record<string, unknown>[];
    };
    const speaker = manifest.models.find((m) => m.name === 'tiny-speaker')!;
    const bytes = Buffer.alloc(8);
    writeFileSync(join(dir, 'p.f32'), bytes);
    speaker.plda = {
      method: 'two-covariance',
      file: 'p.f32',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      dim: 1,
    };
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const dirEnv = { ...process.env, VOXKEY_MODELS_DIR: dir };
    // its calibration was fitted on cosines: the engine would refuse the entry, and so does verify
    const stale = (await run(process.execPath, [CLI, 'models', 'verify'], { env: dirEnv }).catch(
      (e: unknown) => e,
    )) as { code: number; stdout: string };
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/^CALIBRATION MISMATCH\ttiny-speaker\t.*fitted on cosine scores/m);
    speaker.calibration = { ...(speaker.calibration as object), score: 'plda' };
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const ok = await run(process.execPath, [CLI, 'models', 'verify'], { env: dirEnv });
    expect(ok.stdout).toMatch(/^ok\ttiny-speaker \(PLDA\)\t/m);
    writeFileSync(join(dir, 'p.f32'), Buffer.alloc(8, 1));
    const altered = (await run(process.execPath, [CLI, 'models', 'verify'], { env: dirEnv }).catch(
      (e: unknown) => e,
    )) as { code: number; stdout: string };
    expect(altered.code).toBe(1);
    expect(altered.stdout).toMatch(/^SHA256 MISMATCH\ttiny-speaker \(PLDA\)/m);
    rmSync(join(dir, 'p.f32'));
    const missing = (await run(process.execPath, [CLI, 'models', 'verify', '--json'], {
      env: dirEnv,
    }).catch((e: unknown) => e)) as { code: number; stdout: string };
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).models).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'tiny-speaker', what: 'PLDA', ok: false, missing: true }),
      ]),
    );
  });
  it('exits non-zero with a typed message for an unknown model', async () => {
    const err = await run(process.execPath, [CLI, 'models', 'pull', 'nope'], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stderr: string }).stderr).toMatch(/model_not_found/);
  });
});

describe('voxkey-engine help, version, --json and exit codes', () => {
  const env = { ...process.env, VOXKEY_MODELS_DIR: FIXTURE_MODELS };
  const fail = (e: unknown) => e as { code: number; stdout: string; stderr: string };

  it.each([[[]], [['models']], [['models', 'list']], [['models', 'pull']], [['models', 'verify']]])(
    '%j --help prints its usage and exits 0',
    async (names) => {
      const r = await run(process.execPath, [CLI, ...names, '--help'], { env });
      expect(r.stdout).toContain(
        `Usage: voxkey-engine${names.length ? ` ${names.join(' ')}` : ''}`,
      );
      expect(r.stdout).toContain('-h, --help');
      if (names.length === 2) expect(r.stdout).toContain('--json');
    },
  );

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'),
    ) as { version: string };
    expect((await run(process.execPath, [CLI, '--version'], { env })).stdout).toBe(`${version}\n`);
  });

  it('models list and verify --json', async () => {
    const list = JSON.parse(
      (await run(process.execPath, [CLI, 'models', 'list', '--json'], { env })).stdout,
    ) as { models: { name: string; present: boolean }[] };
    expect(list.models).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'tiny-speaker',
          kind: 'speaker',
          bundled: true,
          default: true,
          present: true,
        }),
      ]),
    );
    const verify = JSON.parse(
      (await run(process.execPath, [CLI, 'models', 'verify', '--json'], { env })).stdout,
    ) as { models: { name: string; ok: boolean }[] };
    expect(verify.models).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'tiny-speaker', ok: true })]),
    );
  });

  it('usage errors exit 2; engine errors with --json are JSON on stderr', async () => {
    const unknown = fail(
      await run(process.execPath, [CLI, 'models', 'frob'], { env }).catch((e: unknown) => e),
    );
    expect(unknown.code).toBe(2);
    const missing = fail(
      await run(process.execPath, [CLI, 'models', 'pull', '--json'], { env }).catch(
        (e: unknown) => e,
      ),
    );
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stderr)).toEqual({
      error: { code: 'usage', message: "missing required argument 'name'" },
    });
    const notFound = fail(
      await run(process.execPath, [CLI, 'models', 'pull', 'nope', '--json'], { env }).catch(
        (e: unknown) => e,
      ),
    );
    expect(notFound.code).toBe(1);
    expect(JSON.parse(notFound.stderr).error.code).toBe('model_not_found');
  });
});
