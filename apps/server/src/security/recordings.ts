import type { Sealer } from './sealing.js';

// Bound to the organisation and the request, so a sealed recording copied to another job does not open.
const recordingAad = (orgId: number, requestUuid: string) => `recording:${orgId}:${requestUuid}`;

/** A queued recording is kept sealed (AES-256-GCM, the voiceprint key) until its job ends. */
export function sealRecording(
  sealer: Sealer,
  orgId: number,
  requestUuid: string,
  bytes: Uint8Array,
): Uint8Array {
  return sealer.sealBytes(bytes, recordingAad(orgId, requestUuid));
}

// Sealed values start with version byte 1; a WAV starts with "RIFF", an MP3 with "ID3" or 0xFF.
const SEALED_VERSION = 1;

export function openRecording(
  sealer: Sealer,
  orgId: number,
  requestUuid: string,
  sealed: Uint8Array,
): Uint8Array {
  // A job queued before recordings were sealed (accepted by the previous version during an upgrade) still runs.
  if (sealed[0] !== SEALED_VERSION) return sealed;
  return sealer.openBytes(sealed, recordingAad(orgId, requestUuid));
}
