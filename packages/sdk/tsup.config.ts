import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(
  readFileSync(new URL('./package.json', import.meta.url), 'utf8'),
) as { version: string };

export default defineConfig({
  entry: { index: 'src/index.ts', node: 'src/node.ts', browser: 'src/browser.ts' },
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
  define: { __VOXKEY_SDK_VERSION__: JSON.stringify(version) },
});
