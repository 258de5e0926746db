import { defineConfig } from 'tsup';

/**
 * `@voxkey/sdk/recorder`: the microphone recorder as one self-contained file per format (no
 * chunks, no imports), so that a page without a bundler can serve `dist/recorder.js` and import it.
 * Built after tsup.config.ts (`npm run build`), whose clean step would otherwise race with it.
 */
export default defineConfig({
  entry: { recorder: 'src/recorder.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  splitting: false,
  sourcemap: false,
  clean: false,
  treeshake: true,
  target: 'es2022',
  platform: 'browser',
});
