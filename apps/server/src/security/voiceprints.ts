import type { Sealer } from './sealing.js';

/**
 * Associated data of a sealed sample, so a sealed embedding copied to another row does not open.
 * Version 1 (voiceprints sealed before samples existed) binds the organisation and user; version 2
 * binds the speaker model id too, so a sample cannot be relabelled as another model's.
 */
const SAMPLE_AAD = {
  1: (orgId: number, userId: number) => `voiceprint:${orgId}:${userId}`,
  2: (orgId: number, userId: number, modelId: string) =>
    `voiceprint-sample:${orgId}:${userId}:${modelId}`,
} as const;

export const CURRENT_SEAL_VERSION = 2;

export interface SampleOwner {
  orgId: number;
  userId: number;
  modelId: string;
}

function aad(owner: SampleOwner, version: number): string {
  if (version === 1) return SAMPLE_AAD[1](owner.orgId, owner.userId);
  if (version === 2) return SAMPLE_AAD[2](owner.orgId, owner.userId, owner.modelId);
  throw new Error(`unknown voiceprint seal version ${version}`);
}

export function sealEmbedding(
  sealer: Sealer,
  owner: SampleOwner,
  embedding: Float32Array,
): { sealed: string; version: number } {
  const bytes = new Uint8Array(embedding.buffer, embedding.byteOffset, embedding.byteLength);
  return {
    sealed: sealer.seal(bytes, aad(owner, CURRENT_SEAL_VERSION)),
    version: CURRENT_SEAL_VERSION,
  };
}

export function openEmbedding(
  sealer: Sealer,
  owner: SampleOwner,
  sealed: string,
  version: number,
): Float32Array {
  const bytes = sealer.open(sealed, aad(owner, version));
  return new Float32Array(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  );
}
