/**
 * Builds the score-normalisation cohort of a speaker model (used by `npm run eval -- --write-cohort`):
 * unit-length mean embeddings of TRAIN-split bona fide speakers of the dev-data bundle, drawn with a
 * fixed seed from every corpus (capped per corpus so that Common Voice's many languages, the
 * speechocean762 children and adults and the read-English corpora are all represented), embedded
 * through the engine's own front-end. Only embeddings are stored, never audio.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VoiceEngine } from '../runtime/engine.js';
import type { ScoreNormalizationSpec } from '../scoring/score-norm.js';

export const COHORT_CAPS: Record<string, number> = {
  commonvoice: 260,
  speechocean762: 70,
  'librispeech-tc100': 50,
};
export const COHORT_OTHER_CAP = 25;
export const COHORT_CLIPS_PER_SPEAKER = 3;
export const COHORT_TOPK = 100;

/** Deterministic pseudo-random order (sha1 of seed + key). */
const rank = (seed: string, key: string) =>
  createHash('sha1')
    .update(seed + key)
    .digest('hex');

export function selectCohortSpeakers(
  rows: Record<string, string>[],
  seed = 'voxkey-cohort-v3',
): { key: string; clips: string[] }[] {
  const bySpeaker = new Map<string, { corpus: string; clips: string[] }>();
  for (const r of rows) {
    if (r.kind !== 'bonafide' || r.split !== 'train' || Number(r.duration_s) < 2) continue;
    const key = `${r.corpus}:${r.speaker}`;
    const s = bySpeaker.get(key) ?? { corpus: r.corpus!, clips: [] };
    s.clips.push(r.path!);
    bySpeaker.set(key, s);
  }
  const byCorpus = new Map<string, string[]>();
  for (const [key, s] of bySpeaker)
    byCorpus.set(s.corpus, [...(byCorpus.get(s.corpus) ?? []), key]);
  const out: { key: string; clips: string[] }[] = [];
  for (const corpus of [...byCorpus.keys()].sort()) {
    const keys = byCorpus.get(corpus)!.sort((x, y) => rank(seed, x).localeCompare(rank(seed, y)));
    for (const key of keys.slice(0, COHORT_CAPS[corpus] ?? COHORT_OTHER_CAP)) {
      const clips = bySpeaker
        .get(key)!
        .clips.sort((x, y) => rank(seed, x).localeCompare(rank(seed, y)));
      out.push({ key, clips: clips.slice(0, COHORT_CLIPS_PER_SPEAKER) });
    }
  }
  return out;
}

/** Embeds the cohort speakers, writes `<model>-cohort.f32` into modelsDir and returns the manifest spec. */
export async function buildCohort(
  engine: VoiceEngine,
  datasetDir: string,
  rows: Record<string, string>[],
  modelsDir: string,
  concurrency: number,
): Promise<ScoreNormalizationSpec> {
  const speakers = selectCohortSpeakers(rows);
  const clips = speakers.flatMap((s) => s.clips);
  const emb = new Map<string, Float32Array>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < clips.length) {
        const c = clips[next++]!;
        try {
          emb.set(c, (await engine.embedBytes(readFileSync(join(datasetDir, c)))).embedding);
        } catch {
          // a clip the engine cannot use is left out of its speaker's mean
        }
      }
    }),
  );
  const dim = emb.values().next().value!.length;
  const rowsOut: Float32Array[] = [];
  for (const s of speakers) {
    const vs = s.clips.map((c) => emb.get(c)).filter((v): v is Float32Array => !!v);
    if (!vs.length) continue;
    const m = new Float64Array(dim);
    for (const v of vs) {
      let n = 0;
      for (let i = 0; i < dim; i++) n += v[i]! * v[i]!;
      n = Math.sqrt(n) || 1;
      for (let i = 0; i < dim; i++) m[i]! += v[i]! / n;
    }
    let n = 0;
    for (let i = 0; i < dim; i++) n += m[i]! * m[i]!;
    n = Math.sqrt(n) || 1;
    rowsOut.push(Float32Array.from(m, (x) => x / n));
  }
  const buf = Buffer.alloc(rowsOut.length * dim * 4);
  rowsOut.forEach((r, k) => r.forEach((x, i) => buf.writeFloatLE(x, (k * dim + i) * 4)));
  const file = `${engine.speakerModel.name}-cohort.f32`;
  writeFileSync(join(modelsDir, file), buf);
  return {
    method: 'as-norm',
    file,
    sha256: createHash('sha256').update(buf).digest('hex'),
    count: rowsOut.length,
    dim,
    topK: COHORT_TOPK,
  };
}
