import { describe, expect, it } from 'vitest';
import { createStreamDecoder } from '../src/audio/stream-decoder.js';
import { encodeWav } from '../src/audio/wav.js';
import { EngineError } from '../src/errors.js';
import { audioBytes } from './helpers.js';

/** Feeds `bytes` in pieces of `piece` bytes and collects the samples, flush included. */
async function decodeInPieces(
  format: 'pcm_s16le' | 'wav' | 'mp3',
  bytes: Uint8Array,
  piece: number,
) {
  const decoder = createStreamDecoder(format, 16000);
  await decoder.ready();
  const out: number[] = [];
  for (let offset = 0; offset < bytes.length; offset += piece)
    out.push(...(await decoder.push(bytes.subarray(offset, offset + piece))));
  out.push(...(await decoder.flush()));
  const sampleRate = decoder.sampleRate;
  decoder.free();
  return { samples: Int16Array.from(out), sampleRate };
}

function refusal(run: () => unknown): EngineError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(EngineError);
    return err as EngineError;
  }
  throw new Error('not refused');
}

describe("stream decoder: a stream's audio, in any split", () => {
  const samples = Int16Array.from({ length: 1601 }, (_, i) => ((i * 37) % 2000) - 1000);
  const pcmBytes = new Uint8Array(samples.buffer);

  it('pcm_s16le: samples across odd splits, at the declared rate', async () => {
    const decoded = await decodeInPieces('pcm_s16le', pcmBytes, 333);
    expect(decoded.samples).toEqual(samples);
    expect(decoded.sampleRate).toBe(16000);
  });

  it('wav: the header read across pieces, stereo averaged to mono, written back by encodeWav', async () => {
    const mono = await decodeInPieces('wav', encodeWav(samples, 22050), 7);
    expect(mono).toEqual({ samples, sampleRate: 22050 });
    const stereo = new Int16Array(samples.length * 2);
    samples.forEach((v, i) => stereo.set([v, v], 2 * i));
    const fromStereo = await decodeInPieces('wav', encodeWav(stereo, 16000, { channels: 2 }), 5);
    expect(fromStereo.samples).toEqual(samples);
  });

  it('mp3: the same mpg123 decoder as a posted file', async () => {
    const decoded = await decodeInPieces('mp3', audioBytes('alice_1_44k_stereo.mp3'), 1600);
    expect(decoded.sampleRate).toBe(44100);
    expect(decoded.samples.length / 44100).toBeGreaterThan(8);
  });

  it('refuses sample rates outside 16 to 48 kHz (details.sampleRate) and bytes that are not the declared audio', async () => {
    expect(refusal(() => createStreamDecoder('pcm_s16le', 8000))).toMatchObject({
      code: 'sample_rate_too_low',
      details: { sampleRate: 8000 },
    });
    expect(refusal(() => createStreamDecoder('pcm_s16le', 96000))).toMatchObject({
      code: 'unsupported_format',
      details: { sampleRate: 96000 },
    });
    const pcm = createStreamDecoder('pcm_s16le', 16000);
    expect(refusal(() => pcm.push(encodeWav(samples, 16000))).message).toBe(
      'the audio declared as pcm_s16le starts like a WAV file (declare format "wav")',
    );
    const wav = createStreamDecoder('wav', 16000);
    expect(
      refusal(() => wav.push(encodeWav(new Float32Array(400), 16000, { bitsPerSample: 24 })))
        .message,
    ).toBe('a streamed WAV must be 16-bit PCM, mono or stereo');
    const mp3 = createStreamDecoder('mp3', 16000);
    await mp3.ready();
    let refused: unknown;
    try {
      for (let i = 0; i < 6; i++) await mp3.push(new Uint8Array(15_000).fill(7));
    } catch (err) {
      refused = err;
    }
    mp3.free();
    expect(refused).toMatchObject({
      category: 'invalid_input',
      message: 'no mp3 audio in the first 64 KiB',
    });
  });
});
