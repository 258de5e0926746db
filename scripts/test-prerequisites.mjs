// A test that needs something beside the code (the data set in ../shared/datasets, Chromium, a build)
// asks here instead of skipping quietly. Present: it runs. Absent: the skip is recorded under
// .test-skips/ (the root `npm test` lists every record at the end) and printed; with
// VOXKEY_REQUIRE_ALL_TESTS=1 (set by .ci/run, where everything is present) the test file fails instead.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SKIPS_DIR = path.join(REPO_ROOT, '.test-skips');

/**
 * @param {{ testFile: string; tests: string; missing: string; present: boolean }} prerequisite
 * @returns {boolean} whether the tests can run
 */
export function prerequisite({ testFile, tests, missing, present }) {
  if (present) return true;
  const file = path.relative(
    REPO_ROOT,
    testFile.startsWith('file:') ? fileURLToPath(testFile) : testFile,
  );
  if (process.env.VOXKEY_REQUIRE_ALL_TESTS === '1') {
    throw new Error(
      `${file}: ${missing} is missing, so "${tests}" cannot run, and VOXKEY_REQUIRE_ALL_TESTS=1 requires every test to run`,
    );
  }
  const record = { file, tests, missing };
  const text = JSON.stringify(record);
  mkdirSync(SKIPS_DIR, { recursive: true });
  // One file per distinct skip: the server suite runs twice and test files run in parallel workers.
  writeFileSync(
    path.join(SKIPS_DIR, `${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`),
    text,
  );
  console.warn(`${file}: SKIPPED "${tests}": ${missing} is missing`);
  return false;
}
