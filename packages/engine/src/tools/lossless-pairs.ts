import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VoiceEngine } from '../runtime/engine.js';
import { readCsv } from './csv.js';
import { flacToWav } from './flac.js';

/** One real recording of the data set's lossless/ folder, scored as recorded and as its MP3 twin. */
export interface LosslessPair {
  path: string;
  /** P(bona fide) of the recording as recorded (FLAC, handed to the engine as 16-bit WAV, the form apps send) */
  lossless: number;
  mp3: number;
  losslessLogit: number;
  mp3Logit: number;
}

export interface LosslessVerdicts {
  threshold: number;
  flaggedLossless: number;
  flaggedMp3: number;
  /** recordings flagged in one form and not the other: coding alone changed the verdict */
  flaggedInOneFormOnly: string[];
}

export async function scoreLosslessPairs(
  engine: VoiceEngine,
  dataDir: string,
): Promise<LosslessPair[]> {
  const scored: LosslessPair[] = [];
  for (const pair of readCsv(join(dataDir, 'lossless', 'manifest.csv'))) {
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
  return scored;
}

/** Verdicts at a P(bona fide) threshold: a recording is flagged below it. */
export function losslessVerdicts(pairs: LosslessPair[], threshold: number): LosslessVerdicts {
  return {
    threshold,
    flaggedLossless: pairs.filter((s) => s.lossless < threshold).length,
    flaggedMp3: pairs.filter((s) => s.mp3 < threshold).length,
    flaggedInOneFormOnly: pairs
      .filter((s) => s.lossless < threshold !== s.mp3 < threshold)
      .map((s) => s.path),
  };
}

/** The smallest distance, in logits, between any recording's score (either form) and the threshold. */
export function closestToThreshold(pairs: LosslessPair[], threshold: number): number {
  const at = Math.log(threshold / (1 - threshold));
  return Math.min(
    ...pairs.flatMap((s) => [Math.abs(s.losslessLogit - at), Math.abs(s.mp3Logit - at)]),
  );
}
