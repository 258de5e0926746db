// What an application needs: the engine, its types and errors, limits, the request-side checks and
// the model manifest. Signal-processing internals are in `@voxkey/engine/dsp`.
export { createEngine } from './runtime/engine.js';
export type {
  AnalyseCallOptions,
  ClipEmbedding,
  EngineOptions,
  EngineStats,
  EngineTimings,
  EnrolmentAnalysis,
  SpoofResult,
  VerificationAnalysis,
  VoiceEngine,
  Voiceprint,
} from './runtime/engine.js';
export { EngineError, ERROR_CATEGORIES, isEngineError } from './errors.js';
export type { EngineErrorCategory, EngineErrorCode } from './errors.js';
export { LIMITS, TARGET_SAMPLE_RATE } from './limits.js';
export { decodeBase64Audio } from './audio/base64.js';
export { inspectBytes, readAudioHeader, DEFAULT_INTAKE_LIMITS } from './audio/intake.js';
export type { AudioInfo, AudioInput, IntakeLimits, PcmAudio } from './audio/intake.js';
export { createStreamDecoder, MAX_STREAM_SAMPLE_RATE } from './audio/stream-decoder.js';
export type { StreamAudioFormat, StreamDecoder } from './audio/stream-decoder.js';
export { encodeWav } from './audio/wav.js';
export type { AudioFormat } from './audio/sniff.js';
export {
  cosineSimilarity,
  matchScore,
  decideVerification,
  DEFAULT_CALIBRATION,
  DEFAULT_MATCH_THRESHOLD,
} from './scoring/scoring.js';
export type { VerificationDecision, VerificationResult } from './scoring/scoring.js';
export {
  loadManifest,
  validateManifest,
  selectModel,
  compatibilitySpeakerModels,
  voiceprintModelId,
  speakerInputScale,
  verifyModelFile,
  sha256File,
  defaultModelsDir,
  defaultManifestPath,
} from './models/manifest.js';
export type { Manifest, ModelEntry, ModelKind, LogisticCalibration } from './models/manifest.js';
export type { RecordingQuality } from './scoring/calibration.js';
export { MAX_PHRASE_WORDS } from './phrase/check.js';
export type { PhraseOutcome, PhraseRequest, PhraseVocabulary } from './phrase/check.js';
export { pullModel } from './models/pull.js';
export type { PullOptions, PullResult } from './models/pull.js';
export {
  scoreAgainstSamples,
  DEFAULT_SAMPLE_SCORING_RULE,
  SAMPLE_SCORING_RULES,
} from './scoring/scoring.js';
export type { SampleScorer, SampleScoringRule } from './scoring/scoring.js';
export type { AudioCheck } from './runtime/audio-check-task.js';
export type { AudioProblem } from './runtime/audio-check.js';
export {
  planVoiceprint,
  UPGRADE_SWITCH_SAMPLES,
  UPGRADE_TARGET_SAMPLES,
} from './models/voiceprint-models.js';
export type { VoiceprintPlan, VoiceprintSample } from './models/voiceprint-models.js';
