import FFT from 'fft.js';

/** 512-point real FFT (fft.js, radix-4) and its power spectrum, shared by the speaker fbank and the spoof front-end. */
export const FFT_SIZE = 512;
export const POWER_BINS = FFT_SIZE / 2 + 1;

const fft = new FFT(FFT_SIZE);

export interface RealFftBuffers {
  /** interleaved re/im, as fft.js writes it */
  spectrum: Float64Array;
  /** |X[k]|^2, k = 0..256, after powerSpectrum */
  power: Float64Array;
}

export function realFftBuffers(): RealFftBuffers {
  return { spectrum: new Float64Array(2 * FFT_SIZE), power: new Float64Array(POWER_BINS) };
}

/** Power spectrum |X[k]|^2, k = 0..256, of a real 512-sample frame, into `power`. */
export function powerSpectrum(frame: Float64Array, { spectrum, power }: RealFftBuffers): void {
  fft.realTransform(spectrum, frame);
  for (let k = 0; k < POWER_BINS; k++) {
    const re = spectrum[2 * k]!;
    const im = spectrum[2 * k + 1]!;
    power[k] = re * re + im * im;
  }
}
