/**
 * npm run report [-- --model <speaker model name>] — renders bench/results/engine-eval-<model>.json and
 * engine-bench-<model>.json into docs/accuracy.md and docs/benchmarks.md between the engine markers.
 * Default model: the bundled default speaker model (models/manifest.json). File times say nothing after a
 * clone, so the newest result is not a safe default.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './args.js';
import { renderBench, renderEval, type BenchResult, type EvalResult } from './render.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RESULTS = join(REPO_ROOT, 'bench', 'results');

function defaultSpeakerModel(): string | undefined {
  const manifest = join(REPO_ROOT, 'models', 'manifest.json');
  if (!existsSync(manifest)) return undefined;
  const { models } = JSON.parse(readFileSync(manifest, 'utf8')) as {
    models: Array<{ name: string; kind: string; default?: boolean }>;
  };
  return models.find((m) => m.kind === 'speaker' && m.default)?.name;
}

function replaceBetween(path: string, marker: string, body: string): void {
  const start = `<!-- ${marker}:start -->`;
  const end = `<!-- ${marker}:end -->`;
  const text = readFileSync(path, 'utf8');
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${path} has no ${start} ... ${end} markers`);
  writeFileSync(path, text.slice(0, a + start.length) + '\n' + body + '\n' + text.slice(b));
  console.log(`updated ${path} (${marker})`);
}

const args = parseArgs(process.argv.slice(2), {
  name: 'npm run engine:report --',
  description:
    'Renders bench/results/engine-{eval,bench}-<model>.json into docs/accuracy.md and docs/benchmarks.md.',
  options: {
    'model <name>': 'model whose results to render (default: the bundled default speaker model)',
  },
});
const model = typeof args.model === 'string' ? args.model : defaultSpeakerModel();
if (!model)
  throw new Error('models/manifest.json names no default speaker model: pass --model <name>');
const evalFile = join(RESULTS, `engine-eval-${model}.json`);
const benchFile = join(RESULTS, `engine-bench-${model}.json`);
if (existsSync(evalFile)) {
  const r = JSON.parse(readFileSync(evalFile, 'utf8')) as EvalResult;
  replaceBetween(join(REPO_ROOT, 'docs', 'accuracy.md'), 'engine:eval', renderEval(r));
}
if (existsSync(benchFile)) {
  replaceBetween(
    join(REPO_ROOT, 'docs', 'benchmarks.md'),
    'engine:bench',
    renderBench(JSON.parse(readFileSync(benchFile, 'utf8')) as BenchResult),
  );
}
