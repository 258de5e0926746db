import type { Sealer } from './sealing.js';

// Bound to the organisation and user, so a sealed voiceprint copied to another row does not open.
const voiceprintAad = (orgId: number, userId: number) => `voiceprint:${orgId}:${userId}`;

export function sealEmbedding(sealer: Sealer, orgId: number, userId: number, embedding: Float32Array): string {
  return sealer.seal(new Uint8Array(embedding.buffer, embedding.byteOffset, embedding.byteLength), voiceprintAad(orgId, userId));
}

export function openEmbedding(sealer: Sealer, orgId: number, userId: number, sealed: string): Float32Array {
  const bytes = sealer.open(sealed, voiceprintAad(orgId, userId));
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}
