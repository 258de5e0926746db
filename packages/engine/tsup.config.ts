import { defineConfig } from 'tsup';

export default defineConfig({
  // The Piscina worker must be its own file: dist/worker.js.
  entry: {
    index: 'src/index.ts',
    dsp: 'src/dsp.ts',
    worker: 'src/runtime/worker.ts',
    cli: 'src/cli.ts',
    eval: 'src/tools/eval.ts',
    bench: 'src/tools/bench.ts',
    report: 'src/tools/report.ts',
    'vad-check': 'src/tools/vad-check.ts',
    'lossless-check': 'src/tools/lossless-check.ts',
    'phrase-eval': 'src/tools/phrase-eval.ts',
  },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts', dsp: 'src/dsp.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
  // A development tool's dependency (check:lossless): loaded from node_modules, not bundled.
  external: ['@wasm-audio-decoders/flac'],
});
