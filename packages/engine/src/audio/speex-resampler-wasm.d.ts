// The Emscripten module of @echogarden/speex-resampler-wasm (it ships no types): the C functions used.
declare module '@echogarden/speex-resampler-wasm/simd' {
  interface SpeexResamplerModule {
    HEAPF32: Float32Array;
    HEAPU32: Uint32Array;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    _speex_resampler_init(
      channels: number,
      inRate: number,
      outRate: number,
      quality: number,
      errPtr: number,
    ): number;
    _speex_resampler_reset_mem(state: number): number;
    _speex_resampler_skip_zeros(state: number): number;
    _speex_resampler_get_input_latency(state: number): number;
    _speex_resampler_process_float(
      state: number,
      channel: number,
      inPtr: number,
      inLengthPtr: number,
      outPtr: number,
      outLengthPtr: number,
    ): number;
  }
  const SpeexResampler: (moduleArg?: object) => Promise<SpeexResamplerModule>;
  export default SpeexResampler;
}
