#!/usr/bin/env node
/** `voxkey-engine models list | pull <name> | verify` — the server's `voxkey models ...` CLI calls the same functions. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError } from './errors.js';
import { defaultManifestPath, defaultModelsDir, loadManifest, sha256File } from './manifest.js';
import { pullModel } from './pull.js';

async function main(argv: string[]): Promise<number> {
  const [group, command, name] = argv;
  const modelsDir = process.env.VOXKEY_MODELS_DIR ?? defaultModelsDir();
  const manifestPath = defaultManifestPath(modelsDir);
  if (group !== 'models' || !command) {
    console.error('usage: voxkey-engine models list | pull <name> | verify');
    return 2;
  }
  const manifest = await loadManifest(manifestPath);
  if (command === 'list') {
    for (const m of manifest.models) {
      const present = existsSync(join(modelsDir, m.file));
      console.log(`${m.name}\t${m.kind}\t${m.bundled ? 'bundled' : 'pullable'}${m.default ? '\tdefault' : ''}\t${present ? 'present' : 'absent'}\t${m.license}`);
    }
    return 0;
  }
  if (command === 'pull') {
    if (!name) throw new Error('usage: voxkey-engine models pull <name>');
    let last = 0;
    const r = await pullModel(name, {
      manifestPath,
      modelsDir,
      onProgress: (n, total) => {
        if (n - last > 4 << 20) {
          last = n;
          process.stderr.write(`\r${(n / 1048576).toFixed(1)} MiB${total ? ` of ${(total / 1048576).toFixed(1)} MiB` : ''}`);
        }
      },
    });
    process.stderr.write('\n');
    console.log(r.downloaded ? `downloaded ${r.name} to ${r.path} (sha256 ${r.sha256})` : `${r.name} is already present and verified (${r.path})`);
    return 0;
  }
  if (command === 'verify') {
    let bad = 0;
    for (const m of manifest.models) {
      const path = join(modelsDir, m.file);
      if (!existsSync(path)) continue;
      const ok = (await sha256File(path)) === m.sha256.toLowerCase();
      if (!ok) bad++;
      console.log(`${ok ? 'ok' : 'SHA256 MISMATCH'}\t${m.name}\t${path}`);
    }
    return bad ? 1 : 0;
  }
  console.error(`unknown command ${command}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof EngineError ? `${e.code}: ${e.message}` : e);
    process.exit(1);
  },
);
