// Writes openapi/openapi.json from the contract; with --check, fails when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/index.js';

const target = fileURLToPath(new URL('../../../openapi/openapi.json', import.meta.url));
const generated = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // a missing file is stale too
  }
  if (committed !== generated) {
    console.error(
      'openapi/openapi.json is stale: run `npm run openapi:generate` and commit the result.',
    );
    process.exit(1);
  }
  console.log('openapi/openapi.json is current.');
} else {
  writeFileSync(target, generated);
  console.log(`Wrote ${target}`);
}
