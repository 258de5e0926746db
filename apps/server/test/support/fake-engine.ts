import type { VoiceAnalyzer } from '../../src/workers/job-processor.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A stand-in for the engine that takes `delayMs` per call (`enrolDelayMs`, when given, per enrolment) and
 * always succeeds (or runs `behaviour` first, which may throw or hang): lets worker tests control timing
 * without models.
 */
export function fakeAnalyzer(
  options: {
    delayMs?: number;
    enrolDelayMs?: (call: number) => number;
    behaviour?: (call: number) => Promise<void> | void;
    /** Each verification also offers a sample of a newer speaker model, as an upgrading engine does. */
    upgradeSample?: boolean;
  } = {},
): VoiceAnalyzer & { calls: number } {
  const analyzer = {
    calls: 0,
    speakerModelId: 'fake-speaker',
    spoofModelId: 'fake-spoof',
    defaultDeepfakeThreshold: 0.5,
    defaultEnrolmentDeepfakeThreshold: 0.5,
    async enrol() {
      analyzer.calls += 1;
      await options.behaviour?.(analyzer.calls);
      await sleep(options.enrolDelayMs?.(analyzer.calls) ?? options.delayMs ?? 0);
      return {
        qualityScore: 0.9,
        spoof: { bonafideProbability: 0.99 },
        voiceprint: { modelId: 'fake-speaker', embedding: new Float32Array(8).fill(0.5) },
        timings: {},
      };
    },
    async verify() {
      analyzer.calls += 1;
      await options.behaviour?.(analyzer.calls);
      await sleep(options.delayMs ?? 0);
      return {
        result: 'verified',
        matchScore: 0.95,
        bonafideProbability: 0.99,
        deepfakeDetected: false,
        timings: {},
        ...(options.upgradeSample && {
          qualityScore: 0.9,
          recordingQuality: null,
          upgradeSample: {
            modelId: 'fake-speaker-next',
            embedding: new Float32Array(8).fill(0.25),
          },
        }),
      };
    },
  };
  return analyzer as unknown as VoiceAnalyzer & { calls: number };
}
