/** The rate Voxkey's engine works at: recordings are resampled to it before they are sent. */
export const VOICE_SAMPLE_RATE = 16_000;

/**
 * Resamples mono audio to `toRate` with a windowed-sinc low-pass filter evaluated at each output
 * instant: the cut-off (90 % of the lower Nyquist frequency) removes what would alias, and the
 * filtered signal is read at the output sample times, so any ratio works (48 or 44.1 kHz to 16 kHz).
 */
export function resample(input: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (!(fromRate > 0) || !(toRate > 0))
    throw new RangeError(`resample: rates must be positive, got ${fromRate} and ${toRate}`);
  if (fromRate === toRate) return input.slice();
  const ratio = fromRate / toRate;
  const cutoff = (0.9 * Math.min(1, 1 / ratio)) / 2; // cycles per input sample
  const halfWidth = Math.ceil(16 * Math.max(1, ratio)); // taps each side, in input samples
  const output = new Float32Array(Math.floor(input.length / ratio));
  for (let n = 0; n < output.length; n++) {
    const t = n * ratio; // the output instant, in input samples
    const first = Math.max(0, Math.ceil(t - halfWidth));
    const last = Math.min(input.length - 1, Math.floor(t + halfWidth));
    let sum = 0;
    let weights = 0;
    for (let k = first; k <= last; k++) {
      const x = k - t;
      const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
      const blackman =
        0.42 +
        0.5 * Math.cos((Math.PI * x) / halfWidth) +
        0.08 * Math.cos((2 * Math.PI * x) / halfWidth);
      const w = sinc * blackman;
      sum += input[k]! * w;
      weights += w;
    }
    output[n] = weights > 0 ? sum / weights : 0; // normalised: unity gain at DC, at the edges too
  }
  return output;
}

/**
 * Bytes in a fresh `ArrayBuffer`: `Uint8Array<ArrayBuffer>` on TypeScript 5.7+ (which `fetch` and `Blob`
 * accept as a body), plain `Uint8Array` on older compilers, which have no generic `Uint8Array`.
 */
export type WavBytes = ReturnType<Uint8Array['slice']>;

/** A 16-bit PCM mono WAV of `samples` (floats in [-1, 1], clipped beyond), in a fresh `ArrayBuffer`. */
export function encodeWav(samples: Float32Array, sampleRate: number): WavBytes {
  const bytes = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(bytes.buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i++) view.setUint8(offset + i, text.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // byte rate
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  ascii(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]!));
    view.setInt16(44 + i * 2, s < 0 ? Math.round(s * 0x8000) : Math.round(s * 0x7fff), true);
  }
  return bytes;
}
