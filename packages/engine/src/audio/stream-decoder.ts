import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { EngineError } from '../errors.js';
import { LIMITS } from '../limits.js';
import { downmixToMono } from './downmix.js';

/** How a stream's audio arrives: raw samples, or the bytes of a file in any split. */
export type StreamAudioFormat = 'pcm_s16le' | 'wav' | 'mp3' | 'opus';

/** The highest rate a stream may carry: its samples are held in memory for up to a minute. */
export const MAX_STREAM_SAMPLE_RATE = 48_000;
/** A WAV header longer than this (chunks before `data`) is not a WAV we take. */
const MAX_WAV_HEADER_BYTES = 4096;
/** A compressed stream that has not produced a sample after this many bytes is not audio. */
const MAX_BYTES_BEFORE_SAMPLES = 64 * 1024;

/**
 * Bytes that are not the declared audio (`invalid_input`); the message says how, without naming
 * the format, which the caller knows.
 */
const notAudio = (code: 'corrupt_audio' | 'unsupported_format', detail: string) =>
  new EngineError(code, detail);

/**
 * Turns a stream's audio frames, in whatever split, into mono 16-bit PCM at the stream's own rate
 * (`sampleRate`, between 16 and 48 kHz). Throws `EngineError` (category `invalid_input`) when the
 * bytes are not the declared audio; a refused sample rate carries `details.sampleRate`.
 */
export interface StreamDecoder {
  /** Known once the first samples are out (pcm_s16le: from the start). */
  readonly sampleRate: number | null;
  ready(): Promise<void>;
  /** The samples these bytes complete (possibly none yet). */
  push(bytes: Uint8Array): Int16Array | Promise<Int16Array>;
  /** At the end of the stream: the samples the decoder still holds (an Ogg decoder keeps the last page back). */
  flush(): Promise<Int16Array>;
  free(): void;
}

function checkRate(rate: number): number {
  if (rate < LIMITS.minSampleRate)
    throw new EngineError(
      'sample_rate_too_low',
      `sample rate ${rate} Hz is below the required ${LIMITS.minSampleRate} Hz`,
      { sampleRate: rate },
    );
  if (rate > MAX_STREAM_SAMPLE_RATE)
    throw new EngineError(
      'unsupported_format',
      `sample rate ${rate} Hz is above the ${MAX_STREAM_SAMPLE_RATE} Hz a stream accepts`,
      { sampleRate: rate },
    );
  return rate;
}

/** A file signature in the first bytes of a `pcm_s16le` stream: the client declared the wrong format. */
function fileSignature(bytes: Uint8Array): string | null {
  const ascii = String.fromCharCode(...bytes.subarray(0, 4));
  if (ascii === 'RIFF') return 'a WAV file (declare format "wav")';
  if (ascii.startsWith('ID3') || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0))
    return 'an MP3 file (declare format "mp3")';
  if (ascii === 'OggS') return 'an Ogg file (declare format "opus")';
  if (ascii.startsWith('{') || ascii.startsWith('[')) return 'JSON text sent as a binary message';
  return null;
}

/** Mono 16-bit samples from little-endian bytes, carrying an odd trailing byte to the next frame. */
class PcmDecoder implements StreamDecoder {
  private carry: Uint8Array | null = null;
  readonly sampleRate: number;

  /** `first`: whether the next bytes are the start of the stream (checked for a file signature). */
  constructor(
    sampleRate: number,
    private first = true,
  ) {
    this.sampleRate = checkRate(sampleRate);
  }

  async ready() {}

  push(bytes: Uint8Array): Int16Array {
    if (this.first && bytes.length >= 4) {
      this.first = false;
      const signature = fileSignature(bytes);
      if (signature)
        throw notAudio(
          'unsupported_format',
          `the audio declared as pcm_s16le starts like ${signature}`,
        );
    }
    let data = bytes;
    if (this.carry) {
      data = new Uint8Array(this.carry.length + bytes.length);
      data.set(this.carry);
      data.set(bytes, this.carry.length);
      this.carry = null;
    }
    const whole = data.length - (data.length % 2);
    if (whole < data.length) this.carry = data.slice(whole);
    const samples = new Int16Array(whole / 2);
    new Uint8Array(samples.buffer).set(data.subarray(0, whole));
    return samples;
  }

  async flush() {
    return new Int16Array(0);
  }

  free() {}
}

interface StreamedWavHeader {
  sampleRate: number;
  channels: number;
  dataOffset: number;
}

/**
 * The header of a WAV file whose bytes are still arriving: null until its `data` chunk has begun.
 * Unlike `parseWavHeader` (wav.ts), a chunk cut off by the end of the bytes means "wait", and only
 * 16-bit PCM, mono or stereo, is taken.
 */
function readStreamedWavHeader(header: Uint8Array): StreamedWavHeader | null {
  if (header.length < 12) return null;
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const ascii = (offset: number) => String.fromCharCode(...header.subarray(offset, offset + 4));
  if (ascii(0) !== 'RIFF' || ascii(8) !== 'WAVE')
    throw notAudio('unsupported_format', 'the audio declared as wav is not a RIFF/WAVE file');
  let offset = 12;
  let fmt: { sampleRate: number; channels: number } | null = null;
  while (offset + 8 <= header.length) {
    const id = ascii(offset);
    const size = view.getUint32(offset + 4, true);
    if (id === 'data') {
      if (!fmt) throw notAudio('corrupt_audio', 'the WAV data chunk comes before its fmt chunk');
      return { ...fmt, dataOffset: offset + 8 };
    }
    if (offset + 8 + size > header.length) return null;
    if (id === 'fmt ') {
      const format = view.getUint16(offset + 8, true);
      const channels = view.getUint16(offset + 10, true);
      const sampleRate = view.getUint32(offset + 12, true);
      const bits = view.getUint16(offset + 22, true);
      if ((format !== 1 && format !== 0xfffe) || bits !== 16 || channels < 1 || channels > 2)
        throw notAudio('unsupported_format', 'a streamed WAV must be 16-bit PCM, mono or stereo');
      fmt = { sampleRate: checkRate(sampleRate), channels };
    }
    offset += 8 + size + (size % 2);
  }
  return null;
}

/** A WAV file's bytes: the header is read once, then its data is PCM (stereo averaged to mono). */
class WavDecoder implements StreamDecoder {
  private header: Uint8Array = new Uint8Array(0);
  private channels = 1;
  private pcm: PcmDecoder | null = null;
  private stereoCarry: Int16Array | null = null;
  sampleRate: number | null = null;

  async ready() {}

  push(bytes: Uint8Array): Int16Array {
    if (this.pcm) return this.downmix(this.pcm.push(bytes));
    const joined = new Uint8Array(this.header.length + bytes.length);
    joined.set(this.header);
    joined.set(bytes, this.header.length);
    this.header = joined;
    const parsed = readStreamedWavHeader(this.header);
    if (!parsed) {
      if (this.header.length > MAX_WAV_HEADER_BYTES)
        throw notAudio('corrupt_audio', 'no WAV data chunk in the first 4 KiB');
      return new Int16Array(0);
    }
    this.pcm = new PcmDecoder(parsed.sampleRate, false);
    this.sampleRate = parsed.sampleRate;
    this.channels = parsed.channels;
    const rest = this.header.subarray(parsed.dataOffset);
    this.header = new Uint8Array(0);
    return this.downmix(this.pcm.push(rest));
  }

  private downmix(samples: Int16Array): Int16Array {
    if (this.channels === 1) return samples;
    let input = samples;
    if (this.stereoCarry) {
      input = new Int16Array(this.stereoCarry.length + samples.length);
      input.set(this.stereoCarry);
      input.set(samples, this.stereoCarry.length);
      this.stereoCarry = null;
    }
    const frames = Math.floor(input.length / 2);
    if (input.length % 2) this.stereoCarry = input.slice(frames * 2);
    const mono = new Int16Array(frames);
    for (let i = 0; i < frames; i++) mono[i] = (input[2 * i]! + input[2 * i + 1]!) >> 1;
    return mono;
  }

  async flush() {
    return new Int16Array(0);
  }

  free() {}
}

interface WasmDecoded {
  channelData: Float32Array[];
  samplesDecoded: number;
  sampleRate: number;
}

/**
 * What the two wasm decoders have in common. mpg123-decoder (mp3.ts decodes posted MP3 files with
 * it) decodes synchronously; ogg-opus-decoder's `decode` returns a promise (whatever its type
 * declarations say) and holds the last Ogg page back until `flush`. One instance per stream: both
 * keep the state of the frames cut by a split.
 */
interface WasmDecoder {
  ready: Promise<void>;
  decode(bytes: Uint8Array): WasmDecoded | Promise<WasmDecoded>;
  flush?(): Promise<WasmDecoded>;
  free(): void;
}

/** MP3 or Ogg Opus through the wasm decoders. */
class CompressedDecoder implements StreamDecoder {
  sampleRate: number | null = null;
  private bytesWithoutSamples = 0;

  constructor(
    private readonly decoder: WasmDecoder,
    private readonly format: StreamAudioFormat,
  ) {}

  ready() {
    return this.decoder.ready;
  }

  async push(bytes: Uint8Array): Promise<Int16Array> {
    let decoded: WasmDecoded;
    try {
      decoded = await this.decoder.decode(bytes);
    } catch {
      throw notAudio('corrupt_audio', `the audio declared as ${this.format} cannot be decoded`);
    }
    if (decoded.samplesDecoded === 0) {
      this.bytesWithoutSamples += bytes.length;
      if (this.sampleRate === null && this.bytesWithoutSamples > MAX_BYTES_BEFORE_SAMPLES) {
        throw notAudio(
          'corrupt_audio',
          `no ${this.format} audio in the first ${MAX_BYTES_BEFORE_SAMPLES / 1024} KiB`,
        );
      }
      return new Int16Array(0);
    }
    return this.toPcm(decoded);
  }

  async flush(): Promise<Int16Array> {
    if (!this.decoder.flush) return new Int16Array(0);
    let decoded: WasmDecoded;
    try {
      decoded = await this.decoder.flush();
    } catch {
      throw notAudio(
        'corrupt_audio',
        `the end of the audio declared as ${this.format} cannot be decoded`,
      );
    }
    return decoded.samplesDecoded === 0 ? new Int16Array(0) : this.toPcm(decoded);
  }

  private toPcm(decoded: WasmDecoded): Int16Array {
    this.sampleRate ??= checkRate(decoded.sampleRate);
    const mono = downmixToMono(decoded.channelData, decoded.samplesDecoded);
    const out = new Int16Array(mono.length);
    for (let i = 0; i < out.length; i++) out[i] = Math.round(mono[i]! * 32767);
    return out;
  }

  free() {
    this.decoder.free();
  }
}

/** A decoder for one stream; `sampleRate` is the declared rate of `pcm_s16le` (the other formats carry theirs). */
export function createStreamDecoder(format: StreamAudioFormat, sampleRate: number): StreamDecoder {
  switch (format) {
    case 'pcm_s16le':
      return new PcmDecoder(sampleRate);
    case 'wav':
      return new WavDecoder();
    case 'mp3':
      return new CompressedDecoder(new MPEGDecoder() as unknown as WasmDecoder, 'mp3');
    case 'opus':
      return new CompressedDecoder(new OggOpusDecoder() as unknown as WasmDecoder, 'opus');
  }
}
