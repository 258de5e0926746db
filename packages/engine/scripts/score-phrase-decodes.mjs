// Scores the decodes kept in phrase-eval result files (`npm run eval:phrase`, or
// training/voxkey_train/phrase_base_probe.py's, which has the same `clips` shape) with the engine's own
// phrase match (loopTolerantMatchScore), on the adult English free sentences the files share:
//   node packages/engine/scripts/score-phrase-decodes.mjs A.json [B.json ...] [--threshold 0.3]
// prints, per file, the share of readings that match their own text and of other texts that match.
// Needs the engine built (npm run build).
import { readFileSync } from 'node:fs';
import { loopTolerantMatchScore } from '@voxkey/engine/dsp';

const args = process.argv.slice(2);
const at = args.indexOf('--threshold');
const threshold = at >= 0 ? Number(args[at + 1]) : 0.3;
const files = args.filter((a, i) => !a.startsWith('--') && (at < 0 || i !== at + 1));
const adultSentences = (c) =>
  c.vocabulary === 'free' && c.lang === 'en' && (c.group === 'adult' || c.group === 'unknown');
const decoded = files.map(
  (f) =>
    new Map(
      JSON.parse(readFileSync(f, 'utf8'))
        .clips.filter(adultSentences)
        .map((c) => [c.path, c]),
    ),
);
const shared = [...decoded[0].keys()].filter((p) => decoded.every((d) => d.has(p)));
for (const [k, file] of files.entries()) {
  let own = 0;
  let others = 0;
  let otherPairs = 0;
  for (const path of shared) {
    const clip = decoded[k].get(path);
    if (loopTolerantMatchScore(clip.text, clip.transcript) >= threshold) own++;
    for (const other of clip.impostors) {
      otherPairs++;
      if (loopTolerantMatchScore(other.text, other.transcript) >= threshold) others++;
    }
  }
  console.log(
    `${file}: ${shared.length} adult English sentences at ${threshold}: own text matches ${((100 * own) / shared.length).toFixed(1)}%, other texts match ${((100 * others) / otherPairs).toFixed(2)}% (${otherPairs} pairs)`,
  );
}
