import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { Webhook } from 'standardwebhooks';
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
    expect(code).not.toMatch(
      /from\s*["']node:|require\(["']node:|from\s*["'](fs|path|crypto|os|buffer|stream)["']/,
    );
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

  it('the ./browser entry bundles for platform=browser with no node: imports', async () => {
    const { code } = await bundleForBrowser('src/browser.ts');
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:/);
    expect(code).toContain('registerProcessor');
  });

  it('the built ./recorder entry is one self-contained module (pages without a bundler serve it as it is)', async () => {
    if (!existsSync(`${root}dist/recorder.js`)) return; // `npm test` builds before vitest
    for (const file of ['dist/recorder.js', 'dist/recorder.cjs']) {
      const result = await build({
        entryPoints: [file],
        absWorkingDir: root,
        bundle: true,
        write: false,
        packages: 'external',
        metafile: true,
        logLevel: 'silent',
      });
      expect(Object.keys(result.metafile.inputs), `${file} imports nothing`).toEqual([file]);
      expect(Object.values(result.metafile.outputs)[0]!.imports, `${file} imports nothing`).toEqual(
        [],
      );
    }
    const { code } = await bundleForBrowser('dist/recorder.js');
    expect(code).toContain('registerProcessor');
    expect(code).not.toMatch(/openapi-fetch|standardwebhooks/);
  });

  it('only the ./node entry needs Node built-ins', async () => {
    await expect(bundleForBrowser('src/node.ts')).rejects.toThrow(/node:fs\/promises/);
  });
});

describe('the main entry with web globals only (no Buffer, process or require)', () => {
  it('creates a client, calls through fetch, verifies a webhook and encodes audio', async () => {
    const result = await build({
      entryPoints: ['src/index.ts'],
      absWorkingDir: root,
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'iife',
      globalName: 'VoxkeySDK',
      target: 'es2022',
      logLevel: 'silent',
    });
    const requests: string[] = [];
    const web = {
      fetch: async (request: Request) => {
        requests.push(`${request.method} ${request.url} ${request.headers.get('authorization')}`);
        return new Response(JSON.stringify({ results: [{ id: 1 }] }), {
          headers: { 'Content-Type': 'application/json', 'X-Total-Pages': '1' },
        });
      },
      Request,
      Response,
      Headers,
      FormData,
      AbortController,
      AbortSignal,
      DOMException,
      Event,
      EventTarget,
      TextEncoder,
      TextDecoder,
      ReadableStream,
      URL,
      URLSearchParams,
      crypto: globalThis.crypto,
      btoa,
      atob,
      setTimeout,
      clearTimeout,
      console,
    };
    const context = createContext({ ...web });
    runInContext(result.outputFiles[0]!.text, context);
    const script = `(async () => {
      const sdk = globalThis.VoxkeySDK;
      if (typeof Buffer !== 'undefined' || typeof process !== 'undefined' || typeof require !== 'undefined') throw new Error('not a web-only context');
      const vk = sdk.createVoxkeyClient({ baseUrl: 'https://api.example/v1', token: 'vk_t', orgId: 3, fetch });
      const ids = [];
      for await (const u of vk.users.iterate()) ids.push(u.id);
      const voice = sdk.toVoiceData(new Uint8Array([82, 73, 70, 70, 0, 255]));
      const event = sdk.verifyWebhook(input);
      return { ids, voice, event: event.event_type, uuid: sdk.newRequestUuid() };
    })()`;
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = JSON.stringify({
      event_type: 'verification.completed',
      request_uuid: 'u',
      external_id: 'e',
      result: 'verified',
      match_score: 0.9,
      deepfake_detected: false,
      latency_ms: 1,
      created_at: '2026-11-21T12:00:00Z',
    });
    const at = new Date();
    context.input = {
      secret,
      body,
      headers: {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign('msg_1', at, body),
      },
    };
    const out = await runInContext(script, context);
    expect(out.ids).toEqual([1]);
    expect(out.voice).toBe(Buffer.from([82, 73, 70, 70, 0, 255]).toString('base64'));
    expect(out.event).toBe('verification.completed');
    expect(out.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(requests).toEqual([
      'GET https://api.example/v1/organisations/3/users?page=1 Bearer vk_t',
    ]);
  });
});
