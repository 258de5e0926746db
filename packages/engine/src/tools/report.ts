/**
 * npm run report [-- --model <speaker model name>] — renders bench/results/engine-eval-<model>.json and
 * engine-bench-<model>.json into docs/accuracy.md and docs/benchmarks.md between the engine markers.
 * Default model: the one of the most recent eval result.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './args.js';
import { renderBench, renderEval, type BenchResult, type EvalResult } from './render.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RESULTS = join(REPO_ROOT, 'bench', 'results');

function latest(prefix: string): string | undefined {
  if (!existsSync(RESULTS)) return undefined;
  return readdirSync(RESULTS)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.json'))
    .sort((a, b) => statSync(join(RESULTS, b)).mtimeMs - statSync(join(RESULTS, a)).mtimeMs)[0];
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
  description: "Renders bench/results/engine-{eval,bench}-<model>.json into docs/accuracy.md and docs/benchmarks.md.",
  options: { 'model <name>': 'model whose results to render (default: the newest eval result)' },
});
const model = typeof args.model === 'string' ? args.model : latest('engine-eval-')?.replace(/^engine-eval-|\.json$/g, '');
if (!model) throw new Error('no bench/results/engine-eval-*.json yet: run `npm run eval` first');
const evalFile = join(RESULTS, `engine-eval-${model}.json`);
const benchFile = join(RESULTS, `engine-bench-${model}.json`);
if (existsSync(evalFile)) {
  const r = JSON.parse(readFileSync(evalFile, 'utf8')) as EvalResult;
  replaceBetween(join(REPO_ROOT, 'docs', 'accuracy.md'), 'engine:eval', renderEval(r));
}
if (existsSync(benchFile)) {
  replaceBetween(join(REPO_ROOT, 'docs', 'benchmarks.md'), 'engine:bench', renderBench(JSON.parse(readFileSync(benchFile, 'utf8')) as BenchResult));
}
