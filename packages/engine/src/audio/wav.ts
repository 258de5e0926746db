import { EngineError } from '../errors.js';
import { LIMITS } from '../limits.js';

export type WavSampleFormat = 'int' | 'float';

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  sampleFormat: WavSampleFormat;
  dataOffset: number;
  /** Bytes of sample data actually present (a declared size larger than the file is clamped). */
  dataBytes: number;
  frames: number;
  durationSeconds: number;
}

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_IEEE_FLOAT = 0x0003;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

function corrupt(message: string): EngineError {
  return new EngineError('corrupt_audio', `corrupt WAV: ${message}`);
}

/** Parse the RIFF chunk list with bounds checks; never allocates from declared sizes. */
export function parseWavHeader(b: Uint8Array): WavInfo {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length < 12) throw corrupt('file too short');
  let offset = 12;
  let fmt: {
    tag: number;
    channels: number;
    sampleRate: number;
    blockAlign: number;
    bits: number;
  } | null = null;
  let dataOffset = -1;
  let dataBytes = 0;
  while (offset + 8 <= b.length) {
    const id = String.fromCharCode(b[offset]!, b[offset + 1]!, b[offset + 2]!, b[offset + 3]!);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > b.length) throw corrupt('fmt chunk too short');
      let tag = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const sampleRate = view.getUint32(body + 4, true);
      const blockAlign = view.getUint16(body + 12, true);
      let bits = view.getUint16(body + 14, true);
      if (tag === WAVE_FORMAT_EXTENSIBLE) {
        if (size < 40 || body + 40 > b.length)
          throw corrupt('WAVE_FORMAT_EXTENSIBLE fmt chunk too short');
        const validBits = view.getUint16(body + 18, true);
        tag = view.getUint16(body + 24, true); // first two bytes of the SubFormat GUID
        if (validBits > 0 && validBits > bits) throw corrupt('valid bits exceed container bits');
      }
      fmt = { tag, channels, sampleRate, blockAlign, bits };
    } else if (id === 'data' && dataOffset < 0) {
      dataOffset = body;
      dataBytes = Math.min(size, b.length - body);
      if (fmt) break; // anything after the sample data is ignored
    }
    const next = body + size + (size & 1);
    if (next <= offset) break;
    offset = next;
  }
  if (!fmt) throw corrupt('no fmt chunk');
  if (dataOffset < 0) throw corrupt('no data chunk');
  const { tag, channels, sampleRate, bits } = fmt;
  let sampleFormat: WavSampleFormat;
  if (tag === WAVE_FORMAT_PCM && (bits === 8 || bits === 16 || bits === 24 || bits === 32))
    sampleFormat = 'int';
  else if (tag === WAVE_FORMAT_IEEE_FLOAT && (bits === 32 || bits === 64)) sampleFormat = 'float';
  else {
    throw new EngineError(
      'unsupported_format',
      `WAV encoding not supported (format tag 0x${tag.toString(16)}, ${bits} bits); use PCM 8/16/24/32-bit or 32-bit float`,
    );
  }
  if (channels === 0) throw corrupt('zero channels');
  if (channels > LIMITS.maxChannels)
    throw new EngineError(
      'unsupported_format',
      `WAV has ${channels} channels; at most ${LIMITS.maxChannels} are accepted`,
    );
  if (sampleRate === 0) throw corrupt('zero sample rate');
  if (sampleRate > LIMITS.maxSampleRate)
    throw new EngineError(
      'unsupported_format',
      `sample rate ${sampleRate} Hz is above the ${LIMITS.maxSampleRate} Hz limit`,
    );
  const frameBytes = channels * (bits / 8);
  const frames = Math.floor(dataBytes / frameBytes);
  if (frames === 0) throw corrupt('no samples');
  return {
    sampleRate,
    channels,
    bitsPerSample: bits,
    sampleFormat,
    dataOffset,
    dataBytes: frames * frameBytes,
    frames,
    durationSeconds: frames / sampleRate,
  };
}

export interface DecodedAudio {
  /** Mono (downmixed by averaging channels), in [-1, 1]. */
  samples: Float32Array;
  sampleRate: number;
  channels: number;
}

/** Decode to mono float; `maxFrames` bounds the work (callers check duration first). */
export function decodeWav(b: Uint8Array, maxFrames = Infinity): DecodedAudio {
  const info = parseWavHeader(b);
  const frames = Math.min(info.frames, maxFrames);
  const { channels, bitsPerSample: bits, sampleFormat } = info;
  const view = new DataView(b.buffer, b.byteOffset + info.dataOffset, info.dataBytes);
  const out = new Float32Array(frames);
  const bytesPerSample = bits / 8;
  const inv = 1 / channels;
  let nonFinite = 0;
  let p = 0;
  for (let i = 0; i < frames; i++) {
    let acc = 0;
    for (let c = 0; c < channels; c++, p += bytesPerSample) {
      let v: number;
      if (sampleFormat === 'float') {
        v = bits === 32 ? view.getFloat32(p, true) : view.getFloat64(p, true);
        if (!Number.isFinite(v)) {
          nonFinite++;
          v = 0;
        } else if (v > 1) v = 1;
        else if (v < -1) v = -1;
      } else if (bits === 16) v = view.getInt16(p, true) / 32768;
      else if (bits === 8) v = (view.getUint8(p) - 128) / 128;
      else if (bits === 24) {
        const x = view.getUint8(p) | (view.getUint8(p + 1) << 8) | (view.getInt8(p + 2) << 16);
        v = x / 8388608;
      } else v = view.getInt32(p, true) / 2147483648;
      acc += v;
    }
    out[i] = acc * inv;
  }
  if (nonFinite > 0) throw corrupt(`${nonFinite} non-finite (NaN/Infinity) float samples`);
  return { samples: out, sampleRate: info.sampleRate, channels };
}

/**
 * Encode mono or interleaved multi-channel samples as a WAV file: float samples in any of the
 * encodings below (tests, eval caches, examples), or 16-bit samples as they are (a stream's audio).
 */
export function encodeWav(
  samples: Float32Array | Int16Array,
  sampleRate: number,
  opts: {
    channels?: number;
    bitsPerSample?: 8 | 16 | 24 | 32;
    float?: boolean;
    extensible?: boolean;
  } = {},
): Uint8Array {
  const channels = opts.channels ?? 1;
  const bits = opts.bitsPerSample ?? (opts.float ? 32 : 16);
  const float = opts.float ?? false;
  if (samples instanceof Int16Array && (bits !== 16 || float))
    throw new RangeError('16-bit samples are written as 16-bit PCM');
  const bps = bits / 8;
  const fmtSize = opts.extensible ? 40 : 16;
  const dataBytes = samples.length * bps;
  const buf = new Uint8Array(12 + 8 + fmtSize + 8 + dataBytes);
  const v = new DataView(buf.buffer);
  const w = (o: number, s: string) =>
    [...s].forEach((ch, i) => v.setUint8(o + i, ch.charCodeAt(0)));
  w(0, 'RIFF');
  v.setUint32(4, buf.length - 8, true);
  w(8, 'WAVE');
  w(12, 'fmt ');
  v.setUint32(16, fmtSize, true);
  const tag = float ? WAVE_FORMAT_IEEE_FLOAT : WAVE_FORMAT_PCM;
  v.setUint16(20, opts.extensible ? WAVE_FORMAT_EXTENSIBLE : tag, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * channels * bps, true);
  v.setUint16(32, channels * bps, true);
  v.setUint16(34, bits, true);
  if (opts.extensible) {
    v.setUint16(36, 22, true);
    v.setUint16(38, bits, true);
    v.setUint32(40, channels === 1 ? 0x4 : 0x3, true);
    v.setUint16(44, tag, true);
    // rest of KSDATAFORMAT_SUBTYPE GUID: 0000-0010-8000-00aa00389b71
    [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71].forEach(
      (x, i) => v.setUint8(46 + i, x),
    );
  }
  const d = 12 + 8 + fmtSize;
  w(d, 'data');
  v.setUint32(d + 4, dataBytes, true);
  let p = d + 8;
  if (samples instanceof Int16Array) {
    for (let i = 0; i < samples.length; i++, p += 2) v.setInt16(p, samples[i]!, true);
    return buf;
  }
  for (let i = 0; i < samples.length; i++, p += bps) {
    const x = Math.max(-1, Math.min(1, samples[i]!));
    if (float) v.setFloat32(p, samples[i]!, true);
    else if (bits === 16)
      v.setInt16(p, Math.max(-32768, Math.min(32767, Math.round(x * 32768))), true);
    else if (bits === 8) v.setUint8(p, Math.max(0, Math.min(255, Math.round(x * 128 + 128))));
    else if (bits === 24) {
      const q = Math.max(-8388608, Math.min(8388607, Math.round(x * 8388608)));
      v.setUint8(p, q & 0xff);
      v.setUint8(p + 1, (q >> 8) & 0xff);
      v.setInt8(p + 2, q >> 16);
    } else
      v.setInt32(p, Math.max(-2147483648, Math.min(2147483647, Math.round(x * 2147483648))), true);
  }
  return buf;
}
