/**
 * A linear projection of the speaker embeddings before they are compared (LDA trained on train speakers'
 * recordings as they are and through user channels, so that the directions in which a channel moves an
 * embedding count less than those in which speakers differ):
 *
 *   projected = unit((embedding - mean) W)
 *
 * The file (float32 little-endian, next to the model) holds `mean` (inputDim values) then W (inputDim rows
 * of outputDim), named by the speaker model's manifest entry as `embeddingProjection` with its sha256;
 * `training/voxkey_train/sv_channel_study.py --write-projection` builds it. Voiceprints keep the model's
 * own embeddings: the projection applies when two embeddings are compared, so it can change without
 * re-enrolment.
 */
import { EngineError } from '../errors.js';
import type { ModelEntry } from '../models/manifest.js';
import { assertFloat32FileSpec, readCheckedFloat32 } from './float32-file.js';
import { l2normalize } from './scoring.js';

export interface EmbeddingProjectionSpec {
  method: 'lda';
  file: string;
  sha256: string;
  inputDim: number;
  outputDim: number;
}

export interface EmbeddingProjection {
  spec: EmbeddingProjectionSpec;
  mean: Float32Array;
  /** inputDim x outputDim, row-major. */
  matrix: Float32Array;
}

export function embeddingProjectionSpec(entry: ModelEntry): EmbeddingProjectionSpec | null {
  const s = entry.embeddingProjection as Partial<EmbeddingProjectionSpec> | undefined;
  if (!s) return null;
  const where = `model ${entry.name}: embeddingProjection`;
  assertFloat32FileSpec(where, s as Record<string, unknown>, {
    method: 'lda',
    sizeKeys: ['inputDim', 'outputDim'],
  });
  const embeddingSize = entry.output?.embeddingSize;
  if (typeof embeddingSize === 'number' && embeddingSize !== s.inputDim)
    throw new EngineError(
      'manifest_invalid',
      `${where}.inputDim is ${s.inputDim}, the model's embeddings have ${embeddingSize}`,
    );
  return s as EmbeddingProjectionSpec;
}

/** The speaker model's embedding projection (sha256-checked), or null when its manifest entry names none. */
export async function loadEmbeddingProjection(
  entry: ModelEntry,
  modelsDir: string,
): Promise<EmbeddingProjection | null> {
  const spec = embeddingProjectionSpec(entry);
  if (!spec) return null;
  const values = await readCheckedFloat32(modelsDir, spec.file, {
    sha256: spec.sha256,
    floats: spec.inputDim * (1 + spec.outputDim),
    modelName: entry.name,
    what: 'embedding projection',
  });
  return {
    spec,
    mean: values.subarray(0, spec.inputDim),
    matrix: values.subarray(spec.inputDim),
  };
}

/** How results and manifest notes name a projection: "embeddings projected (LDA to 176 dimensions)". */
export function describeProjection(spec: { method: string; outputDim: number }): string {
  return `embeddings projected (${spec.method.toUpperCase()} to ${spec.outputDim} dimensions)`;
}

/** unit((embedding - mean) W); the embedding itself when there is no projection. */
export function projectEmbedding(
  embedding: Float32Array,
  projection: EmbeddingProjection | null,
): Float32Array {
  if (!projection) return embedding;
  const { inputDim, outputDim } = projection.spec;
  if (embedding.length !== inputDim)
    throw new RangeError(
      `embedding has ${embedding.length} dimensions, the projection expects ${inputDim}`,
    );
  const sums = new Float64Array(outputDim);
  const { mean, matrix } = projection;
  for (let i = 0; i < inputDim; i++) {
    const centred = embedding[i]! - mean[i]!;
    const row = i * outputDim;
    for (let j = 0; j < outputDim; j++) sums[j]! += centred * matrix[row + j]!;
  }
  return l2normalize(Float32Array.from(sums));
}
