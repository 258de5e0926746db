import { describe, expect, it } from 'vitest';
import { openSession } from '../src/models/sessions.js';
import { sileroModelPath, speechProbabilities, VAD_CHUNK } from '../src/features/vad.js';

/** A deterministic speech-like test signal: voiced bursts (harmonics, a moving pitch) between near-silent gaps, plus noise. */
function syntheticSpeech(seconds: number, seed: number): Float32Array {
  const n = Math.round(seconds * 16000);
  const out = new Float32Array(n);
  let s = seed;
  const noise = () => ((s = (s * 16807) % 2147483647) / 2147483647 - 0.5) * 0.01;
  for (let i = 0; i < n; i++) {
    const t = i / 16000;
    const voiced = Math.sin(2 * Math.PI * 0.7 * t + seed) > -0.2 ? 1 : 0.02;
    const f0 = 120 + 40 * Math.sin(2 * Math.PI * 0.5 * t);
    let v = 0;
    for (let h = 1; h <= 8; h++) v += Math.sin(2 * Math.PI * f0 * h * t) / h;
    out[i] = 0.2 * voiced * v * (0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t)) + noise();
  }
  return out;
}

describe('Silero VAD as one Scan call', () => {
  it('gives the per-chunk loop probabilities bit for bit, across call blocks and a partial last chunk', async () => {
    const [scan, loop] = await Promise.all([
      openSession(sileroModelPath('scan'), 1),
      openSession(sileroModelPath('op18-ifless'), 1),
    ]);
    // 20.3 s crosses two 256-chunk calls and ends mid-chunk; 0.02 s is a single partial chunk
    for (const [seconds, seed] of [
      [5, 1],
      [20.3, 2],
      [0.02, 3],
    ] as const) {
      const samples = syntheticSpeech(seconds, seed);
      let checkpoints = 0;
      const scanned = await speechProbabilities(scan, samples, () => checkpoints++);
      const looped = await speechProbabilities(loop, samples);
      expect(scanned.length).toBe(Math.ceil(samples.length / VAD_CHUNK));
      expect(Array.from(scanned)).toEqual(Array.from(looped));
      expect(checkpoints).toBe(Math.ceil(scanned.length / 256) - 1);
    }
    // the signal has both speech and silence, so the comparison is not of two flat lines
    const p = await speechProbabilities(scan, syntheticSpeech(5, 1));
    expect(Math.max(...p)).toBeGreaterThan(0.5);
    expect(Math.min(...p)).toBeLessThan(0.2);
  });
});

describe('Silero VAD batched (encoder and decoder over a block of chunks, one ONNX LSTM)', () => {
  it('gives the Scan model probabilities to float rounding, across call blocks and a partial last chunk', async () => {
    const [batched, scan] = await Promise.all([
      openSession(sileroModelPath('batched'), 1),
      openSession(sileroModelPath('scan'), 1),
    ]);
    for (const [seconds, seed] of [
      [5, 1],
      [20.3, 2],
      [0.02, 3],
    ] as const) {
      const samples = syntheticSpeech(seconds, seed);
      let checkpoints = 0;
      const fast = await speechProbabilities(batched, samples, () => checkpoints++);
      const reference = await speechProbabilities(scan, samples);
      expect(fast.length).toBe(reference.length);
      for (let i = 0; i < fast.length; i++)
        expect(Math.abs(fast[i]! - reference[i]!)).toBeLessThan(1e-4);
      expect(checkpoints).toBe(Math.ceil(fast.length / 256) - 1);
    }
  });
});
