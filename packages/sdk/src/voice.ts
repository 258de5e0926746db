/** Recording as `voice_data`: a base64 string, or the raw WAV/MP3 bytes (encoded for you). */
export type VoiceInput = string | Uint8Array | ArrayBuffer;

/** `voice_data` for a request body: a string is taken as base64 already, bytes are encoded. */
export function voiceDataOf(input: VoiceInput): string {
  return typeof input === 'string' ? input : toVoiceData(input);
}

/**
 * Base64-encodes a recording (WAV or MP3 bytes) into the `voice_data` string that enrolment and
 * verification expect. Works in every runtime (no Node-only APIs).
 */
export function toVoiceData(bytes: Uint8Array | ArrayBuffer | ArrayBufferView): string {
  const view =
    bytes instanceof Uint8Array
      ? bytes
      : ArrayBuffer.isView(bytes)
        ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : new Uint8Array(bytes);
  if (view.byteLength === 0) throw new TypeError('toVoiceData: the recording is empty');
  const NodeBuffer = (
    globalThis as {
      Buffer?: {
        from(b: ArrayBufferLike, o: number, l: number): { toString(e: 'base64'): string };
      };
    }
  ).Buffer;
  if (NodeBuffer)
    return NodeBuffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < view.length; i += chunk) {
    binary += String.fromCharCode.apply(null, view.subarray(i, i + chunk) as unknown as number[]);
  }
  return btoa(binary);
}

/** A random UUID v4 for `request_uuid` (uses `crypto.randomUUID` where available). */
export function newRequestUuid(): string {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  if (!c || typeof c.getRandomValues !== 'function')
    throw new Error('newRequestUuid: no Web Crypto in this runtime');
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
