import { MPEGDecoder } from 'mpg123-decoder';
import { EngineError } from '../errors.js';
import { downmixToMono } from './downmix.js';
import type { DecodedAudio } from './wav.js';

let decoderPromise: Promise<MPEGDecoder> | null = null;

async function getDecoder(): Promise<MPEGDecoder> {
  if (!decoderPromise) {
    decoderPromise = (async () => {
      const d = new MPEGDecoder();
      await d.ready;
      return d;
    })();
  }
  const d = await decoderPromise;
  await d.reset();
  return d;
}

const FEED_BYTES = 16 * 1024;

/**
 * Decode MP3 (MPEG-1/2/2.5 layer I-III) with the WebAssembly mpg123 build, downmixed to mono.
 * Fed in chunks so that decoding stops as soon as `maxFrames` is exceeded (bounded memory).
 * Calls are serialised per thread (one decoder instance per worker).
 */
export async function decodeMp3(bytes: Uint8Array, maxFrames = Infinity): Promise<DecodedAudio> {
  const decoder = await getDecoder();
  const chunks: Float32Array[] = [];
  let total = 0;
  let sampleRate = 0;
  let channels = 0;
  let errors = 0;
  const consoleError = console.error;
  console.error = () => {}; // mpg123-decoder logs every resync error; we report our own
  try {
    for (let o = 0; o < bytes.length && total < maxFrames; o += FEED_BYTES) {
      const r = decoder.decode(bytes.subarray(o, o + FEED_BYTES));
      errors += r.errors.length;
      if (r.samplesDecoded === 0) continue;
      if (sampleRate === 0) sampleRate = r.sampleRate;
      else if (r.sampleRate !== sampleRate)
        throw new EngineError('corrupt_audio', 'corrupt MP3: sample rate changes mid-stream');
      channels = Math.max(channels, r.channelData.length);
      const n = r.samplesDecoded;
      const mono = downmixToMono(r.channelData, n);
      chunks.push(mono);
      total += n;
    }
  } finally {
    console.error = consoleError;
  }
  if (total === 0)
    throw new EngineError(
      'corrupt_audio',
      `corrupt MP3: no decodable frames (${errors} decoder errors)`,
    );
  const samples = new Float32Array(Math.min(total, maxFrames));
  let p = 0;
  for (const c of chunks) {
    if (p >= samples.length) break;
    const take = Math.min(c.length, samples.length - p);
    samples.set(take === c.length ? c : c.subarray(0, take), p);
    p += take;
  }
  return { samples, sampleRate, channels };
}
