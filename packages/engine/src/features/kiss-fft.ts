import KissFFT from '@echogarden/kissfft-wasm';

/**
 * A forward real FFT of one size on KISS FFT's WebAssembly heap (mixed radix, float32). Call `views()` once per
 * use, after every `await` (a later allocation can grow the heap and detach older views), write the frame into
 * `input`, `run()`, then read `size / 2 + 1` bins from `output`, interleaved re/im.
 */
export interface RealTransform {
  size: number;
  views(): { input: Float32Array; output: Float32Array };
  run(): void;
}

type KissFftModule = Awaited<ReturnType<typeof KissFFT>>;
let modulePromise: Promise<KissFftModule> | null = null;
const transforms = new Map<number, RealTransform>();

export async function realTransform(size: number): Promise<RealTransform> {
  const module = await (modulePromise ??= KissFFT());
  const known = transforms.get(size);
  if (known) return known;
  const config = module._kiss_fftr_alloc(size, 0, 0, 0);
  if (!config) throw new Error(`kissfft: cannot allocate a ${size}-point real transform`);
  const inPtr = module._malloc(size * 4);
  const outPtr = module._malloc((size / 2 + 1) * 2 * 4);
  const transform: RealTransform = {
    size,
    views: () => ({
      input: new Float32Array(module.HEAPF32.buffer, inPtr, size),
      output: new Float32Array(module.HEAPF32.buffer, outPtr, (size / 2 + 1) * 2),
    }),
    run: () => module._kiss_fftr(config, inPtr, outPtr),
  };
  transforms.set(size, transform);
  return transform;
}

/** |X[k]|^2 of the transform's last output (`views().output`), k = 0..size/2, into `power`. */
export function powerOf(output: Float32Array, power: Float64Array): void {
  for (let k = 0; k < power.length; k++) {
    const re = output[2 * k]!;
    const im = output[2 * k + 1]!;
    power[k] = re * re + im * im;
  }
}
