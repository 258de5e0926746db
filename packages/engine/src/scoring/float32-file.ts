import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { EngineError } from '../errors.js';

/**
 * A float32 little-endian file that a speaker model's manifest entry names beside the model (a score
 * normalisation cohort, an embedding projection), checked against the entry's sha256 and length.
 */
export async function readCheckedFloat32(
  modelsDir: string,
  file: string,
  expected: { sha256: string; floats: number; modelName: string; what: string },
): Promise<Float32Array> {
  const path = join(modelsDir, file);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new EngineError(
      'model_missing',
      `${expected.what} ${file} for ${expected.modelName} is not in ${modelsDir}`,
      { name: expected.modelName },
      { cause: e },
    );
  }
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== expected.sha256.toLowerCase()) {
    throw new EngineError(
      'model_integrity',
      `${expected.what} ${path} has sha256 ${actual}, but the manifest says ${expected.sha256}; refusing to load it`,
      { name: expected.modelName, expected: expected.sha256, actual },
    );
  }
  if (bytes.byteLength !== expected.floats * 4) {
    throw new EngineError(
      'manifest_invalid',
      `${expected.what} ${file} holds ${bytes.byteLength} bytes, expected ${expected.floats} float32`,
    );
  }
  const values = new Float32Array(expected.floats);
  for (let i = 0; i < values.length; i++) values[i] = bytes.readFloatLE(i * 4);
  return values;
}

/**
 * The fields every such file's manifest spec has: its method (one the engine knows), a plain file name,
 * its sha256, positive integer sizes.
 */
export function assertFloat32FileSpec(
  where: string,
  spec: Record<string, unknown>,
  expected: { method: string; sizeKeys: readonly string[] },
): void {
  if (spec.method !== expected.method)
    throw new EngineError('manifest_invalid', `${where}.method must be "${expected.method}"`);
  const file = spec.file;
  if (typeof file !== 'string' || !file || file.includes('..') || isAbsolute(file))
    throw new EngineError('manifest_invalid', `${where}.file must be a plain file name`);
  if (typeof spec.sha256 !== 'string' || !/^[0-9a-f]{64}$/i.test(spec.sha256))
    throw new EngineError('manifest_invalid', `${where}.sha256 must be 64 hex digits`);
  for (const k of expected.sizeKeys) {
    if (!Number.isInteger(spec[k]) || (spec[k] as number) < 1)
      throw new EngineError('manifest_invalid', `${where}.${k} must be a positive integer`);
  }
}
