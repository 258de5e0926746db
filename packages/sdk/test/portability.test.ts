import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

async function bundleForBrowser(entry: string) {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    logLevel: 'silent',
    metafile: true,
  });
  return { code: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) };
}

describe('the main entry runs in browsers, Deno and Bun', () => {
  it('bundles for platform=browser with its dependencies and no node: imports', async () => {
    const { code, inputs } = await bundleForBrowser('src/index.ts');
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:|from\s*["'](fs|path|crypto|os|buffer|stream)["']/);
    expect(inputs.some((i) => i.includes('openapi-fetch'))).toBe(true);
    expect(inputs.some((i) => i.includes('standardwebhooks'))).toBe(true);
    expect(inputs.some((i) => i.includes('fast-sha256'))).toBe(true);
  });

  it('the built ESM and CJS main entries do not import node: modules', async () => {
    if (!existsSync(`${root}dist/index.js`)) return; // `npm test` builds before vitest
    for (const file of ['dist/index.js', 'dist/index.cjs']) {
      const { code } = await bundleForBrowser(file);
      expect(code).not.toMatch(/["']node:/);
    }
    const chunks = readFileSync(`${root}dist/index.js`, 'utf8');
    expect(chunks).not.toMatch(/node:/);
  });

  it('only the ./node entry needs Node built-ins', async () => {
    await expect(bundleForBrowser('src/node.ts')).rejects.toThrow(/node:fs\/promises/);
  });
});
