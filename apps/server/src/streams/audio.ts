import type { StreamAudioFormat, StreamStart } from '@voxkey/contract';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { ApiError } from '../errors.js';

/** Audio bytes that are not the format the `start` message declared. */
const notAudio = (format: StreamAudioFormat, detail: string) =>
  new ApiError('stream_protocol_error', `The audio is not ${format}: ${detail}`);

const MIN_SAMPLE_RATE = 16_000;
const MAX_SAMPLE_RATE = 48_000;
/** A WAV header longer than this (chunks before `data`) is not a WAV we take. */
const MAX_WAV_HEADER_BYTES = 4096;
/** A compressed stream that has not produced a sample after this many bytes is not audio. */
const MAX_BYTES_BEFORE_SAMPLES = 64 * 1024;

/** Turns the client's audio frames, in whatever split, into mono 16-bit PCM at `sampleRate`. */
export interface StreamDecoder {
  /** Known once the first samples are out (pcm: from the start message). */
  readonly sampleRate: number | null;
  ready(): Promise<void>;
  /** The PCM samples these bytes complete (possibly none yet); throws (or rejects with) ApiError when they are not the declared audio. */
  push(bytes: Uint8Array): Int16Array | Promise<Int16Array>;
  /** At the end of the stream: the samples the decoder still holds (an Ogg decoder keeps the last page back). */
  flush(): Promise<Int16Array>;
  free(): void;
}

function checkRate(rate: number): number {
  if (rate < MIN_SAMPLE_RATE)
    throw ApiError.field(
      'sample_rate',
      'sample_rate_too_low',
      `sample rate ${rate} Hz is below the required ${MIN_SAMPLE_RATE} Hz`,
    );
  if (rate > MAX_SAMPLE_RATE)
    throw ApiError.field(
      'sample_rate',
      'out_of_range',
      `sample rate ${rate} Hz is above the ${MAX_SAMPLE_RATE} Hz a stream accepts`,
    );
  return rate;
}

/** A file signature in the first bytes of a `pcm_s16le` stream: the client declared the wrong format. */
function fileSignature(bytes: Uint8Array): string | null {
  const ascii = Buffer.from(bytes.subarray(0, 4)).toString('latin1');
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
        throw notAudio('pcm_s16le', `the audio declared as pcm_s16le starts like ${signature}`);
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
    Buffer.from(samples.buffer).set(data.subarray(0, whole));
    return samples;
  }

  async flush() {
    return new Int16Array(0);
  }

  free() {}
}

/** A WAV file's bytes: the header is read once (PCM 16-bit, 1 or 2 channels), then its data is PCM. */
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
    const parsed = this.parseHeader();
    if (!parsed) {
      if (this.header.length > MAX_WAV_HEADER_BYTES)
        throw notAudio('wav', 'no WAV data chunk in the first 4 KiB');
      return new Int16Array(0);
    }
    this.pcm = new PcmDecoder(parsed.sampleRate, false);
    this.sampleRate = parsed.sampleRate;
    this.channels = parsed.channels;
    const rest = this.header.subarray(parsed.dataOffset);
    this.header = new Uint8Array(0);
    return this.downmix(this.pcm.push(rest));
  }

  private parseHeader(): { sampleRate: number; channels: number; dataOffset: number } | null {
    const h = Buffer.from(this.header.buffer, this.header.byteOffset, this.header.length);
    if (h.length < 12) return null;
    if (h.toString('latin1', 0, 4) !== 'RIFF' || h.toString('latin1', 8, 12) !== 'WAVE')
      throw notAudio('wav', 'the audio declared as wav is not a RIFF/WAVE file');
    let offset = 12;
    let fmt: { sampleRate: number; channels: number } | null = null;
    while (offset + 8 <= h.length) {
      const id = h.toString('latin1', offset, offset + 4);
      const size = h.readUInt32LE(offset + 4);
      if (id === 'data') {
        if (!fmt) throw notAudio('wav', 'the WAV data chunk comes before its fmt chunk');
        return { ...fmt, dataOffset: offset + 8 };
      }
      if (offset + 8 + size > h.length) return null;
      if (id === 'fmt ') {
        const format = h.readUInt16LE(offset + 8);
        const channels = h.readUInt16LE(offset + 10);
        const sampleRate = h.readUInt32LE(offset + 12);
        const bits = h.readUInt16LE(offset + 22);
        if ((format !== 1 && format !== 0xfffe) || bits !== 16 || channels < 1 || channels > 2) {
          throw notAudio('wav', 'a streamed WAV must be 16-bit PCM, mono or stereo');
        }
        fmt = { sampleRate: checkRate(sampleRate), channels };
      }
      offset += 8 + size + (size % 2);
    }
    return null;
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

interface DecodedAudio {
  channelData: Float32Array[];
  samplesDecoded: number;
  sampleRate: number;
}

/**
 * What the two wasm decoders have in common. mpg123-decoder decodes synchronously;
 * ogg-opus-decoder's `decode` returns a promise (whatever its type declarations say) and holds the
 * last Ogg page back until `flush`.
 */
interface WasmDecoder {
  ready: Promise<void>;
  decode(bytes: Uint8Array): DecodedAudio | Promise<DecodedAudio>;
  flush?(): Promise<DecodedAudio>;
  free(): void;
}

/** MP3 or Ogg Opus through the wasm decoders of the same family the engine uses for MP3. */
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
    let decoded: DecodedAudio;
    try {
      decoded = await this.decoder.decode(bytes);
    } catch {
      throw notAudio(this.format, `the audio declared as ${this.format} cannot be decoded`);
    }
    if (decoded.samplesDecoded === 0) {
      this.bytesWithoutSamples += bytes.length;
      if (this.sampleRate === null && this.bytesWithoutSamples > MAX_BYTES_BEFORE_SAMPLES) {
        throw notAudio(
          this.format,
          `no ${this.format} audio in the first ${MAX_BYTES_BEFORE_SAMPLES / 1024} KiB`,
        );
      }
      return new Int16Array(0);
    }
    return this.toMono(decoded);
  }

  async flush(): Promise<Int16Array> {
    if (!this.decoder.flush) return new Int16Array(0);
    let decoded: DecodedAudio;
    try {
      decoded = await this.decoder.flush();
    } catch {
      throw notAudio(
        this.format,
        `the end of the audio declared as ${this.format} cannot be decoded`,
      );
    }
    return decoded.samplesDecoded === 0 ? new Int16Array(0) : this.toMono(decoded);
  }

  private toMono(decoded: DecodedAudio): Int16Array {
    this.sampleRate ??= checkRate(decoded.sampleRate);
    const channels = decoded.channelData.length;
    const out = new Int16Array(decoded.samplesDecoded);
    for (let i = 0; i < out.length; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += decoded.channelData[c]![i]!;
      const v = Math.max(-1, Math.min(1, sum / channels));
      out[i] = Math.round(v * 32767);
    }
    return out;
  }

  free() {
    this.decoder.free();
  }
}

export function createStreamDecoder(
  start: Pick<StreamStart, 'format' | 'sample_rate'>,
): StreamDecoder {
  switch (start.format) {
    case 'pcm_s16le':
      return new PcmDecoder(start.sample_rate);
    case 'wav':
      return new WavDecoder();
    case 'mp3':
      return new CompressedDecoder(new MPEGDecoder() as unknown as WasmDecoder, 'mp3');
    case 'opus':
      return new CompressedDecoder(new OggOpusDecoder() as unknown as WasmDecoder, 'opus');
  }
}

/** A 16-bit mono WAV file around PCM chunks, padded with silence to `minSamples`. */
export function encodeWav(chunks: Int16Array[], sampleRate: number, minSamples = 0): Uint8Array {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const samples = Math.max(total, minSamples);
  const out = Buffer.alloc(44 + samples * 2);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write('WAVE', 8, 'latin1');
  out.write('fmt ', 12, 'latin1');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(samples * 2, 40);
  let offset = 44;
  for (const chunk of chunks) {
    out.set(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength), offset);
    offset += chunk.byteLength;
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}
