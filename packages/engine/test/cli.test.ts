import { execFile } from 'node:child_process';
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
  it('exits non-zero with a typed message for an unknown model', async () => {
    const err = await run(process.execPath, [CLI, 'models', 'pull', 'nope'], { env }).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stderr: string }).stderr).toMatch(/model_not_found/);
  });
});
