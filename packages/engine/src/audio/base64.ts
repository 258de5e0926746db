import { EngineError } from '../errors.js';
import { LIMITS } from '../limits.js';

const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL_BODY = /^[A-Za-z0-9\-_]*={0,2}$/;

/**
 * The common case, one native pass each way instead of the checks below (a 5 s WAV is 213 kB of base64, where
 * those regular expressions cost about 2.5 ms of the request thread): standard base64 with no whitespace that
 * Node's decoder reads back to exactly the same text (padding optional). Anything else (whitespace, the URL-safe
 * alphabet, bad characters or lengths) returns undefined and takes the strict path, which accepts all this
 * accepts, with the same bytes.
 */
function canonicalBase64(body: string, maxBytes: number): Uint8Array | undefined {
  const bytes = Buffer.from(body, 'base64');
  if (bytes.length === 0 || bytes.length > maxBytes) return undefined;
  const again = bytes.toString('base64');
  let end = again.length;
  if (body.length !== end) while (end > 0 && again.charCodeAt(end - 1) === 61 /* = */) end--;
  if (body.length !== end || !again.startsWith(body)) return undefined;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

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
  const canonical = canonicalBase64(body, maxBytes);
  if (canonical) return canonical;
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
