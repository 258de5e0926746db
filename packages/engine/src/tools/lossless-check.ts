/**
 * npm run check:lossless -- [--data-dir ../shared/datasets] [--spoof-model name] [--threads N] [--scores file.json]
 *
 * Scores each real recording of the data set's lossless/ folder twice, as recorded (FLAC, handed to the
 * engine as 16-bit WAV, the form apps send) and as its MP3 twin, and counts the clips flagged by the
 * spoof check in one form and not the other at the verification and enrolment thresholds: coding alone
 * must never change a verdict. Writes bench/results/lossless-check-<spoof model>.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { createEngine } from '../runtime/engine.js';
import { PACKAGE_DIR } from '../package-dir.js';
import { num, parseArgs, userPath } from './args.js';
import { readCsv } from './csv.js';
import { flacToWav } from './flac.js';

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

const pairs = readCsv(join(dataDir, 'lossless', 'manifest.csv'));
const scored: {
  path: string;
  lossless: number;
  mp3: number;
  losslessLogit: number;
  mp3Logit: number;
}[] = [];
for (const pair of pairs) {
  const [lossless, mp3] = await Promise.all([
    engine.embedBytes(await flacToWav(new Uint8Array(readFileSync(join(dataDir, pair.path!))))),
    engine.embedBytes(new Uint8Array(readFileSync(join(dataDir, pair.mp3_path!)))),
  ]);
  scored.push({
    path: pair.path!,
    lossless: lossless.bonafideProbability,
    mp3: mp3.bonafideProbability,
    losslessLogit: lossless.spoofLogit,
    mp3Logit: mp3.spoofLogit,
  });
}
await engine.close();

const at = (threshold: number) => ({
  threshold,
  flaggedLossless: scored.filter((s) => s.lossless < threshold).length,
  flaggedMp3: scored.filter((s) => s.mp3 < threshold).length,
  flaggedInOneFormOnly: scored
    .filter((s) => s.lossless < threshold !== s.mp3 < threshold)
    .map((s) => s.path),
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
const out = join(repo, 'bench', 'results', `lossless-check-${engine.spoofModelId}.json`);
mkdirSync(join(repo, 'bench', 'results'), { recursive: true });
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
    `${name} threshold ${r.threshold.toFixed(6)}: flagged ${r.flaggedLossless}/${scored.length} lossless, ${r.flaggedMp3}/${scored.length} MP3; flagged in one form only: ${r.flaggedInOneFormOnly.length}`,
  );
}
console.log(`wrote ${out}`);
