import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeInput, DEFAULT_INTAKE_LIMITS } from '../src/audio/intake.js';
import {
  defaultManifestPath,
  defaultModelsDir,
  encoderPrefixFor,
  loadManifest,
  resolveSpoofEncoder,
  selectModel,
  spoofEncoderStates,
  spoofInput,
  type ModelEntry,
} from '../src/models/manifest.js';
import { openSession, resolveIo } from '../src/models/sessions.js';
import { encodeSpeech } from '../src/models/speech-encoder.js';
import { createEngine } from '../src/runtime/engine.js';
import { scoreSpoof } from '../src/models/spoof.js';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';
import { audioBytes } from './helpers.js';

const encoderEntry = (name: string): ModelEntry => ({
  name,
  file: `${name}.onnx`,
  sha256: '0'.repeat(64),
  kind: 'speech-encoder',
  bundled: true,
  input: {},
  output: {},
  license: 'test',
  source: 'test',
});

describe('encoder prefixes in the manifest', () => {
  const prefix = (states: number) => ({ states, file: `p${states}.onnx`, sha256: '1'.repeat(64) });

  it('picks the shortest prefix that has the states a spoof model reads, and none when none has', () => {
    const encoder = { ...encoderEntry('enc'), prefixes: [prefix(4), prefix(2), prefix(3)] };
    expect(encoderPrefixFor(encoder, 2)?.states).toBe(2);
    expect(encoderPrefixFor(encoder, 3)?.states).toBe(3);
    expect(encoderPrefixFor(encoder, 5)).toBeNull();
    expect(encoderPrefixFor(encoder, null)).toBeNull();
    expect(encoderPrefixFor(encoderEntry('plain'), 2)).toBeNull();
  });

  it('reads how many hidden states a spoof model takes from its input shape', () => {
    const spoof = (shape?: (number | string)[]): ModelEntry => ({
      ...encoderEntry('s'),
      kind: 'spoof',
      input: { features: 'whisper-hidden-states', encoder: 'enc', ...(shape ? { shape } : {}) },
    });
    expect(spoofEncoderStates(spoof(['B', 3, 'T', 384]))).toBe(3);
    expect(spoofEncoderStates(spoof(['B', 'L', 'T', 384]))).toBeNull();
    expect(spoofEncoderStates(spoof())).toBeNull();
    expect(spoofEncoderStates({ ...spoof(['B', 3]), input: {} })).toBeNull();
  });
});

async function bundledPrefix() {
  try {
    const manifest = await loadManifest(defaultManifestPath());
    const spoof = selectModel(manifest, 'spoof', defaultModelsDir());
    const resolved = resolveSpoofEncoder(manifest, defaultModelsDir(), spoof);
    return resolved?.prefix ? { spoof, encoder: resolved.entry, prefix: resolved.prefix } : null;
  } catch {
    return null;
  }
}
const bundled = await bundledPrefix();
const present = prerequisite({
  testFile: import.meta.url,
  tests: 'the bundled encoder prefix',
  missing: 'a default spoof model reading an encoder prefix listed in models/manifest.json',
  present: bundled !== null,
});

/** A copy of the bundled manifest, each entry passed through `edit` (the files stay in models/). */
function bundledManifestWith(edit: (entry: ModelEntry) => void): string {
  const manifest = JSON.parse(readFileSync(defaultManifestPath(), 'utf8')) as {
    models: ModelEntry[];
  };
  manifest.models.forEach(edit);
  const path = join(mkdtempSync(join(tmpdir(), 'voxkey-prefix-')), 'manifest.json');
  writeFileSync(path, JSON.stringify(manifest));
  return path;
}

describe.skipIf(!present)('the bundled encoder prefix', () => {
  it('gives the whole encoder’s first hidden states, so the spoof score is the same from either', async () => {
    const { spoof, encoder, prefix } = bundled!;
    const dir = defaultModelsDir();
    const [whole, part, head] = await Promise.all([
      openSession(join(dir, encoder.file), 1),
      openSession(join(dir, prefix.file), 1),
      openSession(join(dir, spoof.file), 1),
    ]);
    const io = {
      ...resolveIo(head, { inputName: spoof.input.name, outputName: spoof.output.name }),
      input: spoofInput(spoof),
      encoderStates: spoofEncoderStates(spoof)!,
    };
    const { samples } = await decodeInput(audioBytes('alice_1.wav'), DEFAULT_INTAKE_LIMITS);
    const [all, first] = [await encodeSpeech(whole, samples), await encodeSpeech(part, samples)];
    expect(first.layers).toBe(prefix.states);
    expect(all.layers).toBeGreaterThan(prefix.states);
    expect(first.frames).toBe(all.frames);
    const n = prefix.states * all.frames * all.dim;
    let worst = 0;
    for (let i = 0; i < n; i++)
      worst = Math.max(worst, Math.abs(first.hiddenStates[i]! - all.hiddenStates[i]!));
    expect(worst).toBeLessThan(1e-4);
    const [fromAll, fromFirst] = [
      await scoreSpoof(head, io, samples, undefined, all),
      await scoreSpoof(head, io, samples, undefined, first),
    ];
    expect(fromFirst.meanLogit).toBeCloseTo(fromAll.meanLogit, 4);
  }, 60_000);

  it('without its prefix file the engine warns and serves the spoof model from the whole encoder', async () => {
    const { encoder } = bundled!;
    const manifestPath = bundledManifestWith((m) => {
      if (m.name === encoder.name)
        m.prefixes = (m.prefixes as { file: string }[]).map((p) => ({ ...p, file: 'absent.onnx' }));
    });
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(w.code ?? '');
    process.on('warning', onWarning);
    const engine = await createEngine({
      threads: 1,
      modelsDir: defaultModelsDir(),
      manifestPath,
      phraseDecoder: false,
    });
    const withPrefix = await createEngine({ threads: 1, phraseDecoder: false });
    try {
      const r = await engine.verify(
        audioBytes('alice_1.wav'),
        (await engine.enrol(audioBytes('alice_2.wav'))).voiceprint,
      );
      const reference = await withPrefix.embedBytes(audioBytes('alice_1.wav'));
      expect(r.bonafideProbability).toBeGreaterThan(0);
      expect(Math.log(r.bonafideProbability)).toBeCloseTo(
        Math.log(reference.bonafideProbability),
        2,
      );
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toContain('VOXKEY_ENCODER_PREFIX_MISSING');
    } finally {
      process.off('warning', onWarning);
      await Promise.all([engine.close(), withPrefix.close()]);
    }
  }, 60_000);

  it('refuses a spoof model that reads more hidden states than its encoder gives', async () => {
    const { spoof } = bundled!;
    const manifestPath = bundledManifestWith((m) => {
      if (m.name === spoof.name) m.input = { ...m.input, shape: ['B', 9, 'T', 384] };
    });
    await expect(
      createEngine({
        threads: 1,
        modelsDir: defaultModelsDir(),
        manifestPath,
        phraseDecoder: false,
      }),
    ).rejects.toMatchObject({ code: 'model_invalid' });
  }, 60_000);
});
