import { headerProblems, type AudioCheck as SignalCheck } from './audio-check.js';
import {
  isPcmAudio,
  pcmInfo,
  readAudioHeader,
  type AudioInput,
  type IntakeLimits,
} from '../audio/intake.js';
import { EngineError } from '../errors.js';
import type { WorkerTask } from './worker.js';
import { forWorker } from './worker-input.js';

export interface AudioCheck extends SignalCheck {
  timings: SignalCheck['timings'] & { queueMs: number; totalMs: number };
}

type RunTask = (
  task: WorkerTask,
  transfer: ArrayBuffer,
) => Promise<{ value: SignalCheck; queueMs: number }>;

/**
 * The pre-check on the caller's side: a file that is not audio throws (`invalid_input`); header
 * problems (sample rate, duration) are reported, and only a recording long enough to mean anything
 * and short enough to be accepted is decoded and measured in a worker.
 */
export async function checkSignalTask(
  input: AudioInput,
  limits: IntakeLimits,
  run: RunTask,
): Promise<AudioCheck> {
  const t0 = performance.now();
  const audio = isPcmAudio(input) ? pcmInfo(input) : readFileHeader(input, limits);
  const header = headerProblems(audio, limits);
  if (header.some((problem) => problem.code !== 'audio_too_short')) {
    const elapsed = performance.now() - t0;
    return {
      audio,
      netSpeechSeconds: 0,
      snrDb: null,
      clippingRatio: 0,
      problems: header,
      timings: { decodeMs: 0, vadMs: 0, workerMs: 0, queueMs: 0, totalMs: elapsed },
    };
  }
  const { audio: carried, transfer } = forWorker(input, false);
  // A short recording is still measured, so the person learns how much speech it held.
  const { value, queueMs } = await run(
    { kind: 'check', audio: carried, limits: { ...limits, minDurationSeconds: 0 } },
    transfer,
  );
  return {
    ...value,
    problems: [...header, ...value.problems],
    timings: { ...value.timings, queueMs, totalMs: performance.now() - t0 },
  };
}

/** A file that is not audio throws (`invalid_input`), as one over the size limit does. */
function readFileHeader(bytes: Uint8Array, limits: IntakeLimits) {
  if (bytes.length > limits.maxFileBytes) {
    throw new EngineError(
      'audio_too_large',
      `audio exceeds the ${limits.maxFileBytes} byte limit`,
      { limitBytes: limits.maxFileBytes },
    );
  }
  return readAudioHeader(bytes);
}
