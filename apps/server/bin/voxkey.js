#!/usr/bin/env node
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('Voxkey is not built yet: run `npm run build` in the repository root first.');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
