import type { Sealer } from './sealing.js';

// Bound to the organisation and the request, so a sealed recording copied to another job does not open.
const recordingAad = (orgId: number, requestUuid: string) => `recording:${orgId}:${requestUuid}`;

/** A queued recording is kept sealed (AES-256-GCM, the voiceprint key) until its job ends. */
export function sealRecording(sealer: Sealer, orgId: number, requestUuid: string, bytes: Uint8Array): Uint8Array {
  return sealer.sealBytes(bytes, recordingAad(orgId, requestUuid));
}

export function openRecording(sealer: Sealer, orgId: number, requestUuid: string, sealed: Uint8Array): Uint8Array {
  return sealer.openBytes(sealed, recordingAad(orgId, requestUuid));
}
