#!/usr/bin/env node
// Writes src/tools/families-data.ts from training/voxkey_train/families.json, the one list of spoof
// attack families that training and the engine's eval share.
//   node scripts/generate-families.mjs          write the file
//   node scripts/generate-families.mjs --check  exit 1 when the committed file is stale
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(
  new URL('../../../training/voxkey_train/families.json', import.meta.url),
);
const target = fileURLToPath(new URL('../src/tools/families-data.ts', import.meta.url));

/** The TypeScript module for the families of `json` (families.json's text). */
export function familiesModule(json) {
  const { families } = JSON.parse(json);
  const quote = (text) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const rows = Object.entries(families).map(
    ([name, family]) => `  ${quote(name)}: [${family.attacks.map(quote).join(', ')}],`,
  );
  return [
    '// Generated from training/voxkey_train/families.json by scripts/generate-families.mjs: edit the JSON, then',
    '// run `npm -w @voxkey/engine run generate:families` (test/families.test.ts fails while they differ).',
    '',
    '/** Spoof attack families of the dev-data bundle and of the generated training attacks: family -> attack labels. */',
    'export const FAMILIES: Record<string, string[]> = {',
    ...rows,
    '};',
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const generated = familiesModule(readFileSync(source, 'utf8'));
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(target, 'utf8');
    } catch {
      // a missing file is stale too
    }
    if (committed !== generated) {
      console.error(
        'src/tools/families-data.ts is stale: run `npm -w @voxkey/engine run generate:families` and commit the result.',
      );
      process.exit(1);
    }
    console.log('src/tools/families-data.ts is current.');
  } else {
    writeFileSync(target, generated);
    console.log(`wrote ${target}`);
  }
}
