import { EngineError } from '../errors.js';
import { findFirstMp3Frame } from './mp3-frames.js';

export type AudioFormat = 'wav' | 'mp3';

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  if (offset + length > bytes.length) return '';
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

/** Detect the container from the bytes; the caller's claim is never trusted. */
export function sniffFormat(bytes: Uint8Array): AudioFormat {
  if (bytes.length < 12)
    throw new EngineError('corrupt_audio', 'audio is too small to be a WAV or MP3 file');
  const head4 = ascii(bytes, 0, 4);
  if ((head4 === 'RIFF' || head4 === 'RIFX' || head4 === 'RF64') && ascii(bytes, 8, 4) === 'WAVE') {
    if (head4 !== 'RIFF')
      throw new EngineError(
        'unsupported_format',
        `${head4} WAV variants are not supported; use little-endian RIFF WAV`,
      );
    return 'wav';
  }
  if (head4 === 'fLaC')
    throw new EngineError('unsupported_format', 'FLAC is not accepted; send WAV or MP3');
  if (head4 === 'OggS')
    throw new EngineError(
      'unsupported_format',
      'Ogg (Opus/Vorbis) is not accepted; send WAV or MP3',
    );
  if (ascii(bytes, 4, 4) === 'ftyp')
    throw new EngineError('unsupported_format', 'MP4/M4A is not accepted; send WAV or MP3');
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    throw new EngineError('unsupported_format', 'WebM/Matroska is not accepted; send WAV or MP3');
  }
  if (head4 === 'FORM')
    throw new EngineError('unsupported_format', 'AIFF is not accepted; send WAV or MP3');
  if (findFirstMp3Frame(bytes) >= 0) return 'mp3';
  throw new EngineError(
    'unsupported_format',
    'audio is neither WAV nor MP3 (format detected from the bytes)',
  );
}
