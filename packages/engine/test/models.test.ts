import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.js';
import {
  loadManifest,
  selectModel,
  validateManifest,
  verifyModelFile,
} from '../src/models/manifest.js';
import { pullModel } from '../src/models/pull.js';
import { FIXTURE_MODELS } from './helpers.js';

const REPO_MANIFEST = join(import.meta.dirname, '..', '..', '..', 'models', 'manifest.json');
const payload = Buffer.from('not really an onnx model, but bytes with a known hash '.repeat(1000));
const payloadSha = createHash('sha256').update(payload).digest('hex');

function entry(over: Record<string, unknown> = {}) {
  return {
    name: 'pullable',
    file: 'pullable.onnx',
    sha256: payloadSha,
    kind: 'speaker',
    bundled: false,
    input: {},
    output: {},
    license: 'MIT',
    source: 'test',
    ...over,
  };
}

function setup(models: Record<string, unknown>[]) {
  const dir = mkdtempSync(join(tmpdir(), 'voxkey-pull-'));
  const manifestPath = join(dir, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify({ models }));
  return { dir, manifestPath };
}

describe('model manifest', () => {
  it('the repository manifest is valid; an entry not bundled is pulled over HTTPS or names its build command', async () => {
    const m = await loadManifest(REPO_MANIFEST);
    for (const e of m.models.filter((x) => !x.bundled)) {
      if (e.url === undefined) expect(e.build, e.name).toMatch(/^\S+/);
      else expect(e.url).toMatch(/^https:\/\//);
    }
  });
  it('the fixture manifest selects defaults and verifies sha256', async () => {
    const m = await loadManifest(join(FIXTURE_MODELS, 'manifest.json'));
    const speaker = selectModel(m, 'speaker', FIXTURE_MODELS);
    expect(speaker.name).toBe('tiny-speaker');
    await expect(verifyModelFile(speaker, FIXTURE_MODELS)).resolves.toContain('tiny-speaker.onnx');
    await expect(
      verifyModelFile({ ...speaker, sha256: '0'.repeat(64) }, FIXTURE_MODELS),
    ).rejects.toMatchObject({ code: 'model_integrity' });
  });
  it('rejects malformed manifests with manifest_invalid', () => {
    const bad = [
      null,
      {},
      { models: [{}] },
      { models: [entry({ sha256: 'xyz' })] },
      { models: [entry({ kind: 'asr' })] },
      { models: [entry({ file: '../x.onnx' })] },
      { models: [entry(), entry()] },
      { models: [entry({ calibration: { type: 'logistic', a: 'x' } })] },
      { models: [entry({ calibration: { type: 'logistic', score: 'lda', a: 1, b: 0 } })] },
      {
        models: [
          entry({ calibration: { type: 'logistic', a: 1, b: 0, fittedWith: { plda: 'x' } } }),
        ],
      },
      {
        models: [
          entry({
            calibration: { type: 'logistic', a: 1, b: 0, fittedWith: { cohort: 'a'.repeat(64) } },
          }),
        ],
      },
      { models: [entry({ kind: 'spoof', input: { features: 'mel-80' } })] },
      { models: [entry({ voiceprintModel: 'not-in-the-manifest' })] },
      { models: [entry({ kind: 'spoof', voiceprintModel: 'x' })] },
    ];
    const neutral = {
      netSpeechSeconds: 3,
      snrDb: 40,
      bandwidthHz: 6000,
      spectralHoleRatio: 0.05,
      decayRateDbPerS: 450,
    };
    bad.push({
      models: [
        entry({
          calibration: {
            type: 'logistic',
            a: 30,
            b: -19,
            quality: { channel: { weights: { unknownFeature: 0.01 }, neutral } },
          },
        }),
      ],
    });
    bad.push({
      models: [
        entry({
          calibration: {
            type: 'logistic',
            a: 30,
            b: -19,
            quality: {
              channel: { weights: { minBandwidthKHz: 0.01 }, neutral: { ...neutral, snrDb: 'x' } },
            },
          },
        }),
      ],
    });
    expect(() =>
      validateManifest({
        models: [
          entry({
            calibration: {
              type: 'logistic',
              a: 30,
              b: -19,
              quality: { channel: { weights: { minBandwidthKHz: 0.01 }, neutral } },
            },
          }),
        ],
      }),
    ).not.toThrow();
    // a spoof model that reads a speech encoder must name it
    bad.push({ models: [entry({ kind: 'spoof', input: { features: 'whisper-hidden-states' } })] });
    expect(() =>
      validateManifest({
        models: [
          entry({ kind: 'spoof', input: { features: 'whisper-hidden-states', encoder: 'enc' } }),
          entry({ name: 'enc', kind: 'speech-encoder' }),
        ],
      }),
    ).not.toThrow();
    // an encoder's prefixes are files like any companion file, with a positive number of states
    const prefix = { states: 3, file: 'enc-3.onnx', sha256: payloadSha };
    bad.push({
      models: [
        entry({ name: 'enc', kind: 'speech-encoder', prefixes: [{ ...prefix, states: 0 }] }),
      ],
    });
    bad.push({
      models: [
        entry({
          name: 'enc',
          kind: 'speech-encoder',
          prefixes: [{ ...prefix, file: '../x.onnx' }],
        }),
      ],
    });
    bad.push({
      models: [
        entry({ name: 'enc', kind: 'speech-encoder', prefixes: [{ states: 3, file: 'x.onnx' }] }),
      ],
    });
    bad.push({ models: [entry({ kind: 'spoof', prefixes: [prefix] })] });
    expect(() =>
      validateManifest({
        models: [entry({ name: 'enc', kind: 'speech-encoder', prefixes: [prefix] })],
      }),
    ).not.toThrow();
    // a speech decoder names its encoder, companion files and decoding
    const decoder = (over: Record<string, unknown> = {}) =>
      entry({
        name: 'dec',
        kind: 'speech-decoder',
        pairsWith: 'enc',
        languages: ['en'],
        crossKv: { file: 'dec-cross-kv.onnx', sha256: payloadSha },
        vocabulary: { file: 'vocabulary.txt', sha256: payloadSha },
        decoding: {
          prompt: [50257, 50362],
          endOfText: 50256,
          suppressIds: [1],
          suppressIdsBegin: [220],
        },
        ...over,
      });
    expect(() => validateManifest({ models: [decoder()] })).not.toThrow();
    bad.push(
      { models: [decoder({ pairsWith: undefined })] },
      { models: [decoder({ crossKv: { file: '../x.onnx', sha256: payloadSha } })] },
      { models: [decoder({ vocabulary: { file: 'v.txt', sha256: 'abc' } })] },
      {
        models: [
          decoder({
            decoding: { prompt: [], endOfText: 1, suppressIds: [], suppressIdsBegin: [] },
          }),
        ],
      },
      { models: [decoder({ languages: 'en' })] },
    );
    for (const doc of bad)
      expect(() => validateManifest(doc), JSON.stringify(doc)).toThrow(
        expect.objectContaining({ code: 'manifest_invalid' }),
      );
  });
  it('reports a missing or unparsable manifest', async () => {
    await expect(loadManifest('/nonexistent/manifest.json')).rejects.toMatchObject({
      code: 'model_missing',
    });
    const { manifestPath } = setup([]);
    writeFileSync(manifestPath, '{oops');
    await expect(loadManifest(manifestPath)).rejects.toMatchObject({ code: 'manifest_invalid' });
  });
  it('suggests pulling when only a pullable model exists', async () => {
    const { dir, manifestPath } = setup([entry({ url: 'https://example.org/m.onnx' })]);
    const m = await loadManifest(manifestPath);
    expect(() => selectModel(m, 'speaker', dir)).toThrow(/models pull pullable/);
    expect(() => selectModel(m, 'speaker', dir, 'pullable')).toThrow(
      expect.objectContaining({ code: 'model_missing' }),
    );
  });
  it('names the build command of a model that is built rather than bundled, and refuses an empty one', async () => {
    const build = 'python -m training.voxkey_train.import_whisper';
    const { dir, manifestPath } = setup([entry({ bundled: false, build })]);
    const m = await loadManifest(manifestPath);
    expect(() => selectModel(m, 'speaker', dir, 'pullable')).toThrow(
      expect.objectContaining({
        code: 'model_missing',
        message: expect.stringContaining(`build it with \`${build}\``),
      }),
    );
    expect(() => validateManifest({ models: [entry({ build: ' ' })] })).toThrow(
      expect.objectContaining({ code: 'manifest_invalid' }),
    );
    await expect(pullModel('pullable', { manifestPath, modelsDir: dir })).rejects.toThrow(
      `is built, not downloaded: run \`${build}\``,
    );
  });
});

describe('pullModel against a local HTTP server', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/model.onnx') {
        res.writeHead(200, { 'content-length': String(payload.length) });
        res.end(payload);
      } else if (req.url === '/tampered.onnx') {
        res.end(Buffer.concat([payload, Buffer.from('x')]));
      } else if (req.url === '/redirect') {
        res.writeHead(302, { location: '/model.onnx' });
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('downloads, verifies sha256 and renames atomically; a second pull is a no-op', async () => {
    const { dir, manifestPath } = setup([entry({ url: `${base}/model.onnx` })]);
    let progress = 0;
    const r = await pullModel('pullable', {
      manifestPath,
      modelsDir: dir,
      onProgress: (n) => (progress = n),
    });
    expect(r).toMatchObject({ downloaded: true, sha256: payloadSha, bytes: payload.length });
    expect(progress).toBe(payload.length);
    expect(readFileSync(join(dir, 'pullable.onnx')).equals(payload)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([]);
    expect((await pullModel('pullable', { manifestPath, modelsDir: dir })).downloaded).toBe(false);
  });
  it('follows redirects', async () => {
    const { dir, manifestPath } = setup([entry({ url: `${base}/redirect` })]);
    expect((await pullModel('pullable', { manifestPath, modelsDir: dir })).downloaded).toBe(true);
  });
  it('discards a download whose sha256 does not match', async () => {
    const { dir, manifestPath } = setup([entry({ url: `${base}/tampered.onnx` })]);
    await expect(pullModel('pullable', { manifestPath, modelsDir: dir })).rejects.toMatchObject({
      code: 'model_integrity',
    });
    expect(existsSync(join(dir, 'pullable.onnx'))).toBe(false);
    expect(readdirSync(dir)).toEqual(['manifest.json']);
  });
  it('reports HTTP errors, unknown names and network failures', async () => {
    const { dir, manifestPath } = setup([
      entry({ url: `${base}/missing.onnx` }),
      entry({ name: 'bundled', file: 'b.onnx', bundled: true }),
    ]);
    await expect(pullModel('pullable', { manifestPath, modelsDir: dir })).rejects.toMatchObject({
      code: 'download_failed',
      message: /HTTP 404/,
    });
    await expect(pullModel('nope', { manifestPath, modelsDir: dir })).rejects.toMatchObject({
      code: 'model_not_found',
    });
    await expect(pullModel('bundled', { manifestPath, modelsDir: dir })).rejects.toMatchObject({
      code: 'model_not_found',
    });
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    await expect(
      pullModel('pullable', { manifestPath, modelsDir: dir, fetchImpl: failing }),
    ).rejects.toMatchObject({ code: 'download_failed' });
  });
  it('refuses plain http except for localhost', async () => {
    const { dir, manifestPath } = setup([entry({ url: 'http://example.org/model.onnx' })]);
    let called = false;
    const spy = (async () => {
      called = true;
      throw new Error('should not be called');
    }) as unknown as typeof fetch;
    const err = await pullModel('pullable', { manifestPath, modelsDir: dir, fetchImpl: spy }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).message).toMatch(/only HTTPS/);
    expect(called).toBe(false);
  });
});
