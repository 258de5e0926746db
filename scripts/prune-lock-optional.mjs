// The registry this project is built against serves only the Linux x64 builds of platform-specific
// optional packages (rollup, turbo, esbuild...). npm then writes a lockfile whose packages still name
// the other platforms' builds as optional dependencies without entries for them, and `npm ci`
// rejects it (npm/cli#9846). This drops the optional dependencies the lockfile has no entry for.
// Run after changing dependencies: `node scripts/prune-lock-optional.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

function resolves(fromPath, name) {
  // Node's lookup: node_modules of the package itself, then of each ancestor, then the root.
  let base = fromPath;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return true;
    if (!base) return false;
    const cut = base.lastIndexOf('node_modules/');
    base = cut <= 0 ? '' : base.slice(0, cut - 1);
  }
}

let pruned = 0;
for (const [path, entry] of Object.entries(packages)) {
  if (!entry.optionalDependencies) continue;
  for (const name of Object.keys(entry.optionalDependencies)) {
    if (!resolves(path, name)) {
      delete entry.optionalDependencies[name];
      pruned++;
    }
  }
  if (Object.keys(entry.optionalDependencies).length === 0) delete entry.optionalDependencies;
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`pruned ${pruned} optional dependencies without a lockfile entry`);
