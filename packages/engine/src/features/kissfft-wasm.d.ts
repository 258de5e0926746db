// The Emscripten module of @echogarden/kissfft-wasm (it ships no types): the C functions used.
declare module '@echogarden/kissfft-wasm' {
  interface KissFftModule {
    HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    _kiss_fftr_alloc(nfft: number, inverse: number, mem: number, lenmem: number): number;
    _kiss_fftr(config: number, timeDataPtr: number, freqDataPtr: number): void;
  }
  const KissFFT: (moduleArg?: object) => Promise<KissFftModule>;
  export default KissFFT;
}
