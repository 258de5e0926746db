/**
 * npm run check:lossless -- [--data-dir ../shared/datasets] [--spoof-model name] [--threads N] [--scores file.json]
 *
 * Scores each real recording of the data set's lossless/ folder twice, as recorded (FLAC, handed to the
 * engine as 16-bit WAV, the form apps send) and as its MP3 twin, and counts the clips flagged by the
 * spoof check in one form and not the other at the verification and enrolment thresholds: coding alone
 * must never change a verdict (exit status 1 when it does). Writes bench/results/lossless-check-<spoof model>.json
 * (or --out), with each threshold's closest score in logits, the margin another CPU's int8 kernels have.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createEngine } from '../runtime/engine.js';
import { PACKAGE_DIR } from '../package-dir.js';
import { num, parseArgs, userPath } from './args.js';
import { closestToThreshold, losslessVerdicts, scoreLosslessPairs } from './lossless-pairs.js';

const args = parseArgs(process.argv.slice(2), {
  name: 'npm run check:lossless --',
  description:
    'Spoof verdicts of real lossless recordings vs their MP3 twins (data set lossless/ folder).',
  options: {
    'data-dir <dir>': 'the development data set (default ../shared/datasets beside the repository)',
    'spoof-model <name>': 'spoof model from the manifest (default: the default one)',
    'threads <n>': 'engine worker threads',
    'scores <file>':
      "also write each pair's spoof logits (log-odds of bona fide), lossless and MP3",
    'out <file>': 'result file (default bench/results/lossless-check-<spoof model>.json)',
  },
});
const repo = resolve(PACKAGE_DIR, '..', '..');
const dataDir =
  typeof args['data-dir'] === 'string'
    ? userPath(args['data-dir'])
    : resolve(repo, '..', 'shared', 'datasets');
const engine = await createEngine({
  spoofModel: typeof args['spoof-model'] === 'string' ? args['spoof-model'] : undefined,
  threads: num(args.threads, availableParallelism()),
  maxQueue: 1024,
});
const verifyThreshold = 1 - engine.defaultDeepfakeThreshold;
const enrolThreshold = 1 - engine.defaultEnrolmentDeepfakeThreshold;

const scored = await scoreLosslessPairs(engine, dataDir);
await engine.close();

const at = (threshold: number) => ({
  ...losslessVerdicts(scored, threshold),
  closestLogitToThreshold: closestToThreshold(scored, threshold),
});
const result = {
  command: `npm run check:lossless -- ${process.argv.slice(2).join(' ')}`.trim(),
  date: new Date().toISOString(),
  spoofModel: engine.spoofModelId,
  clips: scored.length,
  verification: at(verifyThreshold),
  enrolment: at(enrolThreshold),
  meanAbsProbabilityDifference:
    scored.reduce((s, x) => s + Math.abs(x.lossless - x.mp3), 0) / Math.max(scored.length, 1),
};
const out =
  typeof args.out === 'string'
    ? userPath(args.out)
    : join(repo, 'bench', 'results', `lossless-check-${engine.spoofModelId}.json`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
if (typeof args.scores === 'string') {
  const scoresFile = userPath(args.scores);
  writeFileSync(
    scoresFile,
    JSON.stringify({ spoofModel: engine.spoofModelId, pairs: scored }, null, 1) + '\n',
  );
  console.log(`wrote ${scoresFile}`);
}
for (const name of ['verification', 'enrolment'] as const) {
  const r = result[name];
  console.log(
    `${name} threshold ${r.threshold.toFixed(6)}: flagged ${r.flaggedLossless}/${scored.length} lossless, ${r.flaggedMp3}/${scored.length} MP3; flagged in one form only: ${r.flaggedInOneFormOnly.length}; closest score ${r.closestLogitToThreshold.toFixed(3)} logit from it`,
  );
}
console.log(`wrote ${out}`);
const split =
  result.verification.flaggedInOneFormOnly.length + result.enrolment.flaggedInOneFormOnly.length;
if (split > 0) {
  console.error(`FAILED: coding alone changed ${split} verdict(s)`);
  process.exitCode = 1;
}
