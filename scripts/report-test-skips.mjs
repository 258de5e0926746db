// The end of the root `npm test`: lists the tests that were skipped for a missing prerequisite
// (recorded by test-prerequisites.mjs), so a run that passed without them says so.
// `--reset` clears the records before a run.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SKIPS_DIR } from './test-prerequisites.mjs';

if (process.argv.includes('--reset')) {
  rmSync(SKIPS_DIR, { recursive: true, force: true });
} else {
  let names = [];
  try {
    names = readdirSync(SKIPS_DIR).filter((name) => name.endsWith('.json'));
  } catch {
    // no directory: nothing was skipped
  }
  const records = names.map((name) => JSON.parse(readFileSync(path.join(SKIPS_DIR, name), 'utf8')));
  const byMissing = new Map();
  for (const record of records)
    byMissing.set(record.missing, [...(byMissing.get(record.missing) ?? []), record]);
  for (const [missing, skipped] of byMissing) {
    console.warn(
      `\nSKIPPED for missing ${missing}: ${skipped.length} test group${skipped.length === 1 ? '' : 's'}`,
    );
    for (const { file, tests } of skipped.sort((a, b) => a.file.localeCompare(b.file)))
      console.warn(`  ${file}: ${tests}`);
  }
  if (records.length)
    console.warn(
      '\n(.ci/run sets VOXKEY_REQUIRE_ALL_TESTS=1, which turns these skips into failures.)',
    );
  else console.log('No test was skipped for a missing prerequisite.');
}
