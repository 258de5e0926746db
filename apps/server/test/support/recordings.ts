import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prerequisite } from '../../../../scripts/test-prerequisites.mjs';

/** The development data beside the repository (absent for outside contributors; always present in CI). */
export const DATASET_DIR =
  process.env.VOXKEY_DATASET_DIR ??
  fileURLToPath(new URL('../../../../../shared/datasets', import.meta.url));
export const HAS_DATASET = existsSync(path.join(DATASET_DIR, 'manifest.csv'));

/** Whether `tests` in `testFile` can run: the data set is here; otherwise the skip is recorded (scripts/test-prerequisites.mjs). */
export const datasetPresentFor = (testFile: string, tests: string) =>
  prerequisite({
    testFile,
    tests,
    missing: `the development data set (${path.resolve(DATASET_DIR)})`,
    present: HAS_DATASET,
  });

/** What each real dev clip says (`texts.csv`: path, lang, text), for the phrase-check tests. */
export const TEXTS_CSV = path.join(DATASET_DIR, 'texts.csv');

/** Whether `tests` in `testFile` can run: the data set's transcripts are here; otherwise the skip is recorded. */
export const spokenTextsPresentFor = (testFile: string, tests: string) =>
  prerequisite({
    testFile,
    tests,
    missing: `the development data set's transcripts (${path.resolve(TEXTS_CSV)})`,
    present: existsSync(TEXTS_CSV),
  });

/** A real clip and what it says. */
export interface SpokenClip {
  path: string;
  corpus: string;
  speaker: string;
  lang: string;
  text: string;
  duration: number;
}

/** Splits one CSV line with double-quoted fields (texts.csv quotes texts with commas). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      fields.push(field);
      field = '';
    } else field += ch;
  }
  fields.push(field);
  return fields;
}

/** Every real dev clip whose words are known, with its corpus, speaker and duration. */
export function spokenClips(): SpokenClip[] {
  const clips = new Map(manifest().map((clip) => [clip.path, clip]));
  const [, ...rows] = readFileSync(TEXTS_CSV, 'utf8').trim().split(/\r?\n/);
  return rows.flatMap((row) => {
    const [clipPath, lang, text] = csvFields(row);
    const clip = clips.get(clipPath!);
    if (!clip || !text) return [];
    return [
      {
        path: clipPath!,
        corpus: clip.corpus,
        speaker: clip.speaker,
        lang: lang!,
        text,
        duration: clip.duration,
      },
    ];
  });
}

/** A clip's file as base64 (for voice_data). */
export const clipBase64 = (clipPath: string) =>
  readFileSync(path.join(DATASET_DIR, clipPath)).toString('base64');

interface Clip {
  path: string;
  corpus: string;
  speaker: string;
  duration: number;
  kind: string;
}

function manifest(): Clip[] {
  const [, ...rows] = readFileSync(path.join(DATASET_DIR, 'manifest.csv'), 'utf8')
    .trim()
    .split('\n');
  return rows.map((row) => {
    const cols = row.split(',');
    return {
      path: cols[0]!,
      corpus: cols[1]!,
      speaker: cols[2]!,
      kind: cols[3]!,
      duration: Number(cols[5]),
    };
  });
}

/** Base64 recordings of real speakers: `count` long-enough clips for each of `speakers` speakers of one corpus. */
export function speakerRecordings(options: {
  corpus?: string;
  speakers: number;
  count: number;
  minDuration?: number;
}): string[][] {
  const bySpeaker = new Map<string, Clip[]>();
  for (const clip of manifest()) {
    if (
      clip.kind !== 'bonafide' ||
      clip.corpus !== (options.corpus ?? 'commonvoice') ||
      clip.duration < (options.minDuration ?? 4.5)
    )
      continue;
    bySpeaker.set(clip.speaker, [...(bySpeaker.get(clip.speaker) ?? []), clip]);
  }
  const chosen = [...bySpeaker.values()]
    .filter((clips) => clips.length >= options.count)
    .slice(0, options.speakers);
  if (chosen.length < options.speakers)
    throw new Error('not enough speakers with long clips in the dataset');
  return chosen.map((clips) =>
    clips
      .slice(0, options.count)
      .map((clip) => readFileSync(path.join(DATASET_DIR, clip.path)).toString('base64')),
  );
}

export interface LosslessRecording {
  speaker: string;
  /** the recording as recorded, as 16-bit WAV bytes (decoded from the data set's FLAC) */
  wav: Uint8Array;
  /** the same utterance as the data set's MP3 */
  mp3: Uint8Array;
}

/** Real recordings that were never lossy-coded (lossless/), each with its MP3 twin: `count` clips of 4.5 s or more of one speaker. */
export async function losslessRecordings(count: number): Promise<LosslessRecording[]> {
  const { FLACDecoder } = await import('@wasm-audio-decoders/flac');
  const { encodeWav } = await import('@voxkey/engine/dsp');
  const [, ...rows] = readFileSync(path.join(DATASET_DIR, 'lossless', 'manifest.csv'), 'utf8')
    .trim()
    .split('\n');
  const durations = new Map(manifest().map((clip) => [clip.path, clip.duration]));
  const clips = rows
    .map((row) => row.split(','))
    .map((cols) => ({ path: cols[0]!, speaker: cols[2]!, mp3: cols[5]! }))
    .filter((clip) => (durations.get(clip.mp3) ?? 0) >= 4.5);
  const perSpeaker = new Map<string, number>();
  for (const clip of clips) perSpeaker.set(clip.speaker, (perSpeaker.get(clip.speaker) ?? 0) + 1);
  const speaker = [...perSpeaker].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
  const decoder = new FLACDecoder();
  await decoder.ready;
  try {
    const chosen = clips.filter((clip) => clip.speaker === speaker).slice(0, count);
    const out: LosslessRecording[] = [];
    for (const clip of chosen) {
      const { channelData, sampleRate } = await decoder.decodeFile(
        new Uint8Array(readFileSync(path.join(DATASET_DIR, clip.path))),
      );
      await decoder.reset();
      out.push({
        speaker,
        wav: encodeWav(channelData[0]!, sampleRate),
        mp3: new Uint8Array(readFileSync(path.join(DATASET_DIR, clip.mp3))),
      });
    }
    return out;
  } finally {
    decoder.free();
  }
}
