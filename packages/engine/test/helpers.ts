import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';

export const FIXTURES = join(import.meta.dirname, 'fixtures');
export const FIXTURE_MODELS = join(FIXTURES, 'models');
export const DATASET_DIR =
  process.env.VOXKEY_DATASET_DIR ??
  join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'datasets');

/** Whether `tests` in `testFile` can run: the data set (`present`) is here; otherwise the skip is recorded (scripts/test-prerequisites.mjs). */
export const datasetPresentFor = (testFile: string, tests: string, present: boolean) =>
  prerequisite({
    testFile,
    tests,
    missing: `the development data set (${resolve(DATASET_DIR)})`,
    present,
  });

export function audioBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(FIXTURES, 'audio', name)));
}

export function audioBase64(name: string): string {
  return Buffer.from(audioBytes(name)).toString('base64');
}

export function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

/** Deterministic PRNG for fuzzing. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function sine(seconds: number, rate = 16000, freq = 440, amp = 0.5): Float32Array {
  const out = new Float32Array(Math.round(seconds * rate));
  for (let i = 0; i < out.length; i++) out[i] = amp * Math.sin((2 * Math.PI * freq * i) / rate);
  return out;
}
