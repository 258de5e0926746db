import * as ort from 'onnxruntime-node';
import { EngineError } from '../errors.js';

export interface ModelRef {
  path: string;
  inputName?: string;
  outputName?: string;
}

export interface ResolvedIo {
  inputName: string;
  outputName: string;
}

export function sessionOptions(intraOpThreads: number): ort.InferenceSession.SessionOptions {
  return {
    intraOpNumThreads: intraOpThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    enableCpuMemArena: true,
    logSeverityLevel: 3,
  };
}

export async function openSession(
  path: string,
  intraOpThreads: number,
  name = path,
): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(path, sessionOptions(intraOpThreads));
  } catch (e) {
    throw new EngineError(
      'model_invalid',
      `cannot load ONNX model ${name}: ${(e as Error).message}`,
      { path },
      { cause: e },
    );
  }
}

/** The manifest's input/output names when the model has them, else the session's first input/output. */
export function resolveIo(
  session: ort.InferenceSession,
  ref: Pick<ModelRef, 'inputName' | 'outputName'>,
): ResolvedIo {
  const inputName =
    ref.inputName && session.inputNames.includes(ref.inputName)
      ? ref.inputName
      : session.inputNames[0];
  const outputName =
    ref.outputName && session.outputNames.includes(ref.outputName)
      ? ref.outputName
      : session.outputNames[0];
  if (!inputName || !outputName)
    throw new EngineError('model_invalid', 'model has no inputs or outputs');
  return { inputName, outputName };
}
