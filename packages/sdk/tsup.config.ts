import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', node: 'src/node.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  splitting: true,
  sourcemap: false,
  clean: true,
  treeshake: true,
  target: 'es2022',
  platform: 'neutral',
  external: ['node:fs/promises'],
  removeNodeProtocol: false,
});
