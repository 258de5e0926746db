import { EngineError } from '../errors.js';
import { LIMITS } from '../limits.js';

const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL_BODY = /^[A-Za-z0-9\-_]*={0,2}$/;

/**
 * Strict base64 (standard or URL-safe alphabet, optional padding, whitespace ignored).
 * The size limit is checked on the encoded length before anything is allocated.
 */
export function decodeBase64Audio(
  input: string,
  maxBytes: number = LIMITS.maxFileBytes,
): Uint8Array {
  if (typeof input !== 'string' || input.length === 0) {
    throw new EngineError('invalid_base64', 'voice data must be a non-empty base64 string');
  }
  if (
    Math.floor((input.length * 3) / 4) > maxBytes + 4 &&
    Math.floor((input.replace(/\s+/g, '').length * 3) / 4) > maxBytes + 2
  ) {
    throw new EngineError('audio_too_large', `audio exceeds the ${maxBytes} byte limit`, {
      limitBytes: maxBytes,
    });
  }
  let body = input;
  const comma = body.startsWith('data:') ? body.indexOf(',') : -1;
  if (comma >= 0) body = body.slice(comma + 1);
  body = body.replace(/\s+/g, '');
  const urlSafe = !BASE64_BODY.test(body);
  if (urlSafe && !BASE64URL_BODY.test(body)) {
    throw new EngineError(
      'invalid_base64',
      'voice data is not valid base64 (unexpected characters)',
    );
  }
  const unpadded = body.replace(/=+$/, '');
  if (unpadded.length % 4 === 1 || (body.length !== unpadded.length && body.length % 4 !== 0)) {
    throw new EngineError(
      'invalid_base64',
      'voice data is not valid base64 (bad length or padding)',
    );
  }
  const bytes = Buffer.from(unpadded, urlSafe ? 'base64url' : 'base64');
  if (bytes.length === 0)
    throw new EngineError('invalid_base64', 'voice data decodes to zero bytes');
  if (bytes.length > maxBytes) {
    throw new EngineError('audio_too_large', `audio exceeds the ${maxBytes} byte limit`, {
      limitBytes: maxBytes,
    });
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}
