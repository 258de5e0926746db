#!/usr/bin/env node
/**
 * `voxkey-engine models list | pull <name> | verify` — the server's `voxkey models ...` CLI calls the same functions.
 * Exit codes as the server's CLI: 0 success, 1 failure (engine error, sha256 mismatch), 2 usage error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { EngineError } from './errors.js';
import {
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  companionFiles,
  sha256File,
} from './models/manifest.js';
import { pullModel } from './models/pull.js';
import { calibrationMismatch } from './scoring/probe-score.js';

const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
const JSON_HELP = 'print the result as JSON on stdout (errors as JSON on stderr)';

function engineVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

function buildProgram(setExitCode: (code: number) => void): Command {
  const modelsDir = () => process.env.VOXKEY_MODELS_DIR ?? defaultModelsDir();
  const program = new Command('voxkey-engine')
    .description(
      'Voxkey engine tools. VOXKEY_MODELS_DIR (default ./models) holds the models and manifest.json.',
    )
    .version(engineVersion(), '-V, --version', 'print the engine version')
    .helpOption('-h, --help', 'show help for a command')
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      `\nExit codes: ${EXIT.ok} success, ${EXIT.failure} failure (engine error, sha256 mismatch), ${EXIT.usage} usage error.`,
    );
  const models = program
    .command('models')
    .description('the models in the manifest')
    .helpCommand(false);

  models
    .command('list')
    .description(
      'list the manifest models: kind, bundled, pullable or built, default, present on disk, licence',
    )
    .option('--json', JSON_HELP)
    .action(async (options: { json?: boolean }) => {
      const dir = modelsDir();
      const manifest = await loadManifest(defaultManifestPath(dir));
      const rows = manifest.models.map((m) => ({
        name: m.name,
        kind: m.kind,
        bundled: m.bundled,
        ...(m.build ? { build: m.build } : {}),
        default: m.default,
        present: existsSync(join(dir, m.file)),
        license: m.license,
      }));
      if (options.json) return printJson({ models: rows });
      for (const m of rows) {
        console.log(
          `${m.name}\t${m.kind}\t${m.bundled ? 'bundled' : m.build ? 'built' : 'pullable'}${m.default ? '\tdefault' : ''}\t${m.present ? 'present' : 'absent'}\t${m.license}`,
        );
      }
    });

  models
    .command('pull')
    .description('download a model listed in the manifest and verify its sha256')
    .argument('<name>', 'model name from the manifest')
    .option('--json', JSON_HELP)
    .action(async (name: string, options: { json?: boolean }) => {
      const dir = modelsDir();
      let last = 0;
      const r = await pullModel(name, {
        manifestPath: defaultManifestPath(dir),
        modelsDir: dir,
        onProgress: (n, total) => {
          if (n - last > 4 << 20) {
            last = n;
            process.stderr.write(
              `\r${(n / 1048576).toFixed(1)} MiB${total ? ` of ${(total / 1048576).toFixed(1)} MiB` : ''}`,
            );
          }
        },
      });
      if (last) process.stderr.write('\n');
      if (options.json) return printJson(r);
      console.log(
        r.downloaded
          ? `downloaded ${r.name} to ${r.path} (sha256 ${r.sha256})`
          : `${r.name} is already present and verified (${r.path})`,
      );
    });

  models
    .command('verify')
    .description(
      'check the sha256 of every model file present and of the files its entry names beside it (projection, PLDA, cohort), and that its calibration fits its comparison; exits 1 on a mismatch or a missing companion file',
    )
    .option('--json', JSON_HELP)
    .action(async (options: { json?: boolean }) => {
      const dir = modelsDir();
      const manifest = await loadManifest(defaultManifestPath(dir));
      const results: {
        name: string;
        what?: string;
        path: string;
        ok: boolean;
        missing?: true;
        problem?: string;
      }[] = [];
      const check = async (file: string, sha256: string) =>
        (await sha256File(join(dir, file))) === sha256.toLowerCase();
      for (const m of manifest.models) {
        if (!existsSync(join(dir, m.file))) continue;
        results.push({ name: m.name, path: join(dir, m.file), ok: await check(m.file, m.sha256) });
        const mismatch = calibrationMismatch(m);
        if (mismatch)
          results.push({
            name: m.name,
            what: 'calibration',
            path: defaultManifestPath(dir),
            ok: false,
            problem: mismatch,
          });
        for (const c of companionFiles(m)) {
          const path = join(dir, c.file);
          results.push(
            existsSync(path)
              ? { name: m.name, what: c.what, path, ok: await check(c.file, c.sha256) }
              : { name: m.name, what: c.what, path, ok: false, missing: true },
          );
        }
      }
      if (options.json) printJson({ models: results });
      else
        for (const r of results)
          console.log(
            r.problem
              ? `CALIBRATION MISMATCH\t${r.name}\t${r.problem}`
              : `${r.ok ? 'ok' : r.missing ? 'MISSING' : 'SHA256 MISMATCH'}\t${r.name}${r.what ? ` (${r.what})` : ''}\t${r.path}`,
          );
      if (results.some((r) => !r.ok)) setExitCode(EXIT.failure);
    });

  return program;
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  let exitCode: number = EXIT.ok;
  const program = buildProgram((code) => (exitCode = code));
  const commands = [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)];
  for (const command of commands) {
    command.exitOverride();
    if (json) command.configureOutput({ writeErr: () => {} });
  }
  const fail = (code: string, message: string) =>
    process.stderr.write(
      json ? `${JSON.stringify({ error: { code, message } })}\n` : `${message}\n`,
    );
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return EXIT.ok;
      if (json) fail('usage', err.message.replace(/^error: /, ''));
      return EXIT.usage;
    }
    if (err instanceof EngineError) fail(err.code, `${err.code}: ${err.message}`);
    else
      fail(
        'failure',
        String(err instanceof Error ? (json ? err.message : (err.stack ?? err.message)) : err),
      );
    return EXIT.failure;
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
