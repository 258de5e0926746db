/**
 * npm run eval:phrase -- [--data-dir ../shared/datasets] [--per-speaker 4] [--other-languages 5] [--threads N]
 *
 * The phrase check through the engine on real speech whose text is known (the data set's texts.csv): each
 * clip is analysed as a verification with its own text as the phrase (a digit string as a digit challenge,
 * decoded digits-only; anything else as a free sentence). Prints the word error rate per corpus, language and
 * age group, and at the engine's pass thresholds the share of clips whose own text matches (genuine) and of
 * other clips' texts of similar length that match the same recording (impostor: --impostors per English clip,
 * seeded, a different normalised text within 2 words of the length, from the same group; digit strings against
 * digit strings). The decoder reads the expected text (its context), so each impostor text is a decode of its own.
 * Writes bench/results/phrase-eval.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { createEngine } from '../runtime/engine.js';
import { PACKAGE_DIR } from '../package-dir.js';
import { PHRASE_PASS, type PhraseVocabulary } from '../phrase/check.js';
import { matchScore, wordEditDistance } from '../phrase/match.js';
import { DIGIT_WORDS, normalizePhrase, phraseWords } from '../phrase/normalise.js';
import { median, num, parseArgs, userPath } from './args.js';
import { readCsv } from './csv.js';

const LENGTH_TOLERANCE = 2;

const args = parseArgs(process.argv.slice(2), {
  name: 'npm run eval:phrase --',
  description: 'Word error rate and phrase-match rates of the engine on real speech (texts.csv).',
  options: {
    'data-dir <dir>': 'the development data set (default ../shared/datasets beside the repository)',
    'per-speaker <n>':
      'speechocean762 sentence clips per speaker (default 4; every digit string is kept)',
    'other-languages <n>': 'Common Voice clips per non-English language (default 5)',
    'threads <n>': 'engine worker threads',
    'impostors <n>':
      "other clips' texts decoded against each English recording (default 4; each is a full decode, as the decoder reads the expected text)",
    'only-english': 'skip the Common Voice clips in other languages',
    'seed <n>': 'sampling seed (default 32)',
    'out <file>': 'result file (default bench/results/phrase-eval.json)',
  },
});
const repo = resolve(PACKAGE_DIR, '..', '..');
const dataDir =
  typeof args['data-dir'] === 'string'
    ? userPath(args['data-dir'])
    : resolve(repo, '..', 'shared', 'datasets');
const perSpeaker = num(args['per-speaker'], 4);
const otherLanguages = args['only-english'] ? 0 : num(args['other-languages'], 5);
const impostorsPerClip = num(args.impostors, 4);
const random = seededRandom(num(args.seed, 32));

interface Clip {
  path: string;
  lang: string;
  text: string;
  corpus: string;
  group: 'adult' | 'child' | 'unknown';
  vocabulary: PhraseVocabulary;
}

const notes = new Map(
  readCsv(join(dataDir, 'manifest.csv')).map((r) => [
    r.path!,
    Object.fromEntries((r.notes ?? '').split(';').map((kv) => kv.split('=') as [string, string])),
  ]),
);
const isDigitString = (text: string) =>
  phraseWords(text).every((w) => (DIGIT_WORDS as readonly string[]).includes(w));
const all: Clip[] = readCsv(join(dataDir, 'texts.csv')).map((r) => {
  const corpus = r.path!.split('/')[1]!;
  const age = notes.get(r.path!)?.age_group;
  return {
    path: r.path!,
    lang: r.lang!,
    text: r.text!,
    corpus,
    group: age === 'child' || age === 'adult' ? age : 'unknown',
    vocabulary: r.lang === 'en' && isDigitString(r.text!) ? 'digits' : 'free',
  };
});

function sample(): Clip[] {
  const bySpeaker = new Map<string, Clip[]>();
  const picked: Clip[] = [];
  for (const clip of all) {
    if (clip.corpus === 'speechocean762') {
      if (clip.vocabulary === 'digits') picked.push(clip);
      else {
        const speaker = clip.path.split('/')[2]!;
        bySpeaker.set(speaker, [...(bySpeaker.get(speaker) ?? []), clip]);
      }
    } else if (clip.lang === 'en') picked.push(clip);
  }
  for (const clips of bySpeaker.values()) picked.push(...shuffle(clips).slice(0, perSpeaker));
  const byLanguage = new Map<string, Clip[]>();
  for (const clip of all)
    if (clip.corpus === 'commonvoice' && clip.lang !== 'en')
      byLanguage.set(clip.lang, [...(byLanguage.get(clip.lang) ?? []), clip]);
  for (const clips of byLanguage.values()) picked.push(...shuffle(clips).slice(0, otherLanguages));
  return picked;
}

interface Heard extends Clip {
  transcript: string;
  matchScore: number;
  errors: number;
  words: number;
  phraseMs: number;
  /** Match scores of other clips' texts, each decoded as that text's check would be (the decoder reads the expected text). */
  impostorScores: number[];
  impostors: { text: string; transcript: string }[];
}

const clips = sample();
/** Each sampled text's normalised form and word count, worked out once (impostor picking compares every pair). */
const textShape = new Map(
  clips.map((c) => [
    c.text,
    { normalised: normalizePhrase(c.text), words: phraseWords(c.text).length },
  ]),
);
const shapeOf = (c: Clip) => textShape.get(c.text)!;
const adultPool = clips.filter(
  (c) =>
    c.lang === 'en' &&
    c.vocabulary === 'free' &&
    (c.group === 'adult' || c.corpus === 'commonvoice'),
);
const childPool = clips.filter(
  (c) => c.corpus === 'speechocean762' && c.group === 'child' && c.vocabulary === 'free',
);
const digitPool = clips.filter((c) => c.vocabulary === 'digits');
const poolOf = (c: Clip): Clip[] =>
  c.lang !== 'en'
    ? []
    : c.vocabulary === 'digits'
      ? digitPool
      : c.corpus === 'speechocean762' && c.group === 'child'
        ? childPool
        : adultPool;

/** Other clips' texts this recording could be mistaken for: similar length, another text, same kind. */
function impostorTexts(clip: Clip): string[] {
  const own = shapeOf(clip);
  const candidates = poolOf(clip).filter(
    (o) =>
      shapeOf(o).normalised !== own.normalised &&
      Math.abs(shapeOf(o).words - own.words) <= LENGTH_TOLERANCE,
  );
  return shuffle(candidates)
    .slice(0, impostorsPerClip)
    .map((o) => o.text);
}

interface Task {
  clip: Clip;
  expected: string;
  index: number;
}
const tasks: Task[] = clips.flatMap((clip, index) => [
  { clip, expected: clip.text, index },
  ...impostorTexts(clip).map((expected) => ({ clip, expected, index })),
]);
const engine = await createEngine({
  threads: num(args.threads, availableParallelism()),
  maxQueue: 1024,
  taskTimeoutMs: 120_000,
});
console.error(
  `eval:phrase: ${clips.length} clips, ${tasks.length - clips.length} impostor decodes, decoder ${engine.phraseDecoder?.name ?? 'none'}, ${engine.stats().threads} threads`,
);
const byClip = new Map<number, Heard>();
const impostorsOf = new Map<number, { text: string; transcript: string; matchScore: number }[]>();
const failed: Record<string, string> = {};
let next = 0;
let done = 0;
await Promise.all(
  Array.from({ length: engine.stats().threads + 1 }, async () => {
    while (next < tasks.length) {
      const { clip, expected, index } = tasks[next++]!;
      try {
        const r = await engine.embedBytes(new Uint8Array(readFileSync(join(dataDir, clip.path))), {
          phrase: { expected, vocabulary: clip.vocabulary },
        });
        if (expected !== clip.text)
          impostorsOf.set(index, [
            ...(impostorsOf.get(index) ?? []),
            { text: expected, transcript: r.phrase!.transcript, matchScore: r.phrase!.matchScore },
          ]);
        else {
          const ref = phraseWords(clip.text);
          byClip.set(index, {
            ...clip,
            transcript: r.phrase!.transcript,
            matchScore: r.phrase!.matchScore,
            errors: wordEditDistance(ref, phraseWords(r.phrase!.transcript)),
            words: ref.length,
            phraseMs: r.timings.encoderMs + r.timings.phraseMs,
            impostorScores: [],
            impostors: [],
          });
        }
      } catch (e) {
        failed[`${clip.path} as ${JSON.stringify(expected)}`] = String(e);
      }
      if (++done % 200 === 0) console.error(`  ${done}/${tasks.length}`);
    }
  }),
);
await engine.close();
const heard: Heard[] = [...byClip.entries()]
  .sort(([a], [b]) => a - b)
  .map(([index, h]) => {
    const impostors = impostorsOf.get(index) ?? [];
    return {
      ...h,
      impostorScores: impostors.map((i) => i.matchScore),
      impostors: impostors.map(({ text, transcript }) => ({ text, transcript })),
    };
  });

function block(name: string, members: Heard[]) {
  if (!members.length) return null;
  const threshold = PHRASE_PASS[members[0]!.vocabulary];
  const impostor = members.flatMap((c) => c.impostorScores);
  const words = members.reduce((n, c) => n + c.words, 0);
  const errors = members.reduce((n, c) => n + c.errors, 0);
  return {
    block: name,
    clips: members.length,
    wer: errors / Math.max(words, 1),
    threshold,
    genuinePass: members.filter((c) => c.matchScore >= threshold).length / members.length,
    impostorPairs: impostor.length,
    impostorPass: impostor.length
      ? impostor.filter((s) => s >= threshold).length / impostor.length
      : null,
    /** Genuine and impostor pass rates at other thresholds, to choose the pass threshold from. */
    atThresholds: [0.2, 0.3, 0.4, 0.5, 0.6, 0.66, 0.7, 0.8].map((t) => ({
      threshold: t,
      genuinePass: members.filter((c) => c.matchScore >= t).length / members.length,
      impostorPass: impostor.length
        ? impostor.filter((s) => s >= t).length / impostor.length
        : null,
    })),
  };
}

const en = heard.filter((c) => c.lang === 'en');
const so = en.filter((c) => c.corpus === 'speechocean762');
const cvEn = en.filter((c) => c.corpus === 'commonvoice');
const adultSentences = [
  ...so.filter((c) => c.group === 'adult' && c.vocabulary === 'free'),
  ...cvEn,
];
const rows = [
  block('adult English sentences (speechocean762 adult + Common Voice en)', adultSentences),
  block(
    'speechocean762 adult sentences',
    so.filter((c) => c.group === 'adult' && c.vocabulary === 'free'),
  ),
  block('Common Voice en', cvEn),
  block(
    'speechocean762 child sentences',
    so.filter((c) => c.group === 'child' && c.vocabulary === 'free'),
  ),
  block(
    'speechocean762 digit strings, adult',
    so.filter((c) => c.group === 'adult' && c.vocabulary === 'digits'),
  ),
  block(
    'speechocean762 digit strings, child',
    so.filter((c) => c.group === 'child' && c.vocabulary === 'digits'),
  ),
].filter((r) => r !== null);
const languages = [...new Set(heard.map((c) => c.lang))].sort();
const perLanguage = languages.map((lang) => {
  const members = heard.filter((c) => c.lang === lang && c.vocabulary === 'free');
  const words = members.reduce((n, c) => n + c.words, 0);
  return {
    lang,
    clips: members.length,
    wer: members.reduce((n, c) => n + c.errors, 0) / Math.max(words, 1),
  };
});

const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
console.log('| block | clips | WER | threshold | own text matches | other texts match (pairs) |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows)
  console.log(
    `| ${r.block} | ${r.clips} | ${pct(r.wer)} | ${r.threshold} | ${pct(r.genuinePass)} | ${r.impostorPass === null ? '-' : `${(100 * r.impostorPass).toFixed(2)}%`} (${r.impostorPairs}) |`,
  );
console.log('\nown text / other texts matching at other thresholds:');
for (const r of rows)
  console.log(
    `  ${r.block}: ${r.atThresholds.map((t) => `${t.threshold} ${pct(t.genuinePass)}/${t.impostorPass === null ? '-' : (100 * t.impostorPass).toFixed(2) + '%'}`).join(', ')}`,
  );
console.log(
  `\nWER per language (free decoding, English-only recogniser): ${perLanguage.map((l) => `${l.lang} ${pct(l.wer)} (${l.clips})`).join(', ')}`,
);
console.log(
  `encoder + decoder per clip (median): ${median(heard.map((c) => c.phraseMs)).toFixed(0)} ms; ${Object.keys(failed).length} failed`,
);
const out =
  typeof args.out === 'string'
    ? userPath(args.out)
    : join(repo, 'bench', 'results', 'phrase-eval.json');
mkdirSync(resolve(out, '..'), { recursive: true });
writeFileSync(
  out,
  JSON.stringify(
    {
      createdAt: new Date().toISOString(),
      decoder: engine.phraseDecoder?.name ?? null,
      thresholds: PHRASE_PASS,
      sample: { perSpeaker, otherLanguages, seed: num(args.seed, 32) },
      blocks: rows,
      perLanguage,
      failed,
      clips: heard.map(
        ({ path, lang, group, vocabulary, text, transcript, matchScore: s, impostors }) => ({
          path,
          lang,
          group,
          vocabulary,
          text,
          transcript,
          matchScore: Number(s.toFixed(4)),
          impostors,
        }),
      ),
    },
    null,
    2,
  ) + '\n',
);
console.error(`wrote ${out}`);

function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(xs: T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
