/** Intake limits, documented in the package README. */
export const LIMITS = {
  /** Encoded file size (after base64 decoding). */
  maxFileBytes: 10 * 1024 * 1024,
  /** Longest accepted recording. */
  maxDurationSeconds: 60,
  /** Shortest accepted recording (total, before VAD). The spec asks for >= 3 s of speech. */
  minDurationSeconds: 3,
  minSampleRate: 16000,
  maxSampleRate: 192000,
  maxChannels: 8,
  /** Net speech (after VAD) required for enrolment and verification. */
  minNetSpeechSeconds: 3,
  /** Peak below this (about -74 dBFS) counts as silence. */
  silencePeak: 2e-4,
  /** Fraction of samples at |x| >= clipLevel above which the audio is rejected as clipped. */
  maxClippingRatio: 0.05,
  clipLevel: 0.999,
  /** Verification below this SNR estimate is `inconclusive`. */
  minVerifySnrDb: 5,
} as const;

export const TARGET_SAMPLE_RATE = 16000;
