import { toVoiceData } from './voice.js';
import { encodeWav, resample, VOICE_SAMPLE_RATE } from './wav.js';

export * from './index.js';
export { encodeWav, resample, VOICE_SAMPLE_RATE } from './wav.js';

export interface RecordVoiceOptions {
  /** How long to record, in seconds (0 < seconds <= 120). */
  seconds: number;
  /** Stops recording (the microphone is released); the signal's reason is thrown. */
  signal?: AbortSignal;
  /** A microphone's `deviceId` (from `navigator.mediaDevices.enumerateDevices()`); default the system's. */
  deviceId?: string;
  /** Called for each captured block: seconds recorded so far and the block's peak level (0 to 1), e.g. for a level meter. */
  onProgress?: (progress: { elapsedSeconds: number; peak: number }) => void;
  /**
   * How samples leave the audio thread: an `AudioWorklet` (default where available) or the older
   * `ScriptProcessorNode`. The other one is used when the first is missing or cannot load (for
   * example a Content-Security-Policy without `blob:` for worklets).
   */
  capture?: 'audio-worklet' | 'script-processor';
}

export interface VoiceRecording {
  /** A 16 kHz mono 16-bit PCM WAV file. */
  wav: Uint8Array;
  /** Always 16000. */
  sampleRate: number;
  durationSeconds: number;
  /** The rate the browser captured at before resampling (often 48000 or 44100). */
  captureSampleRate: number;
  /** The WAV base64-encoded: the `voice_data` of an enrolment or verification. */
  toVoiceData(): string;
}

const WORKLET = `registerProcessor('voxkey-recorder', class extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) this.port.postMessage(channel.slice());
    return true;
  }
});`;

/**
 * Records the microphone for `seconds` and returns a 16 kHz mono WAV ready for `voice_data`.
 * Asks for raw speech (no echo cancellation, noise suppression or automatic gain: they distort a
 * voiceprint), captures with Web Audio, downmixes to mono, resamples to 16 kHz and releases the
 * microphone. Call it from a user gesture (a click): browsers start audio only then.
 *
 * ```ts
 * import { recordVoice } from '@voxkey/sdk/browser';
 * const recording = await recordVoice({ seconds: 7 });
 * await fetch('/api/verify', { method: 'POST', body: JSON.stringify({ voice_data: recording.toVoiceData() }) });
 * ```
 */
export async function recordVoice(options: RecordVoiceOptions): Promise<VoiceRecording> {
  const { seconds, signal } = options;
  if (!(typeof seconds === 'number' && seconds > 0 && seconds <= 120)) throw new RangeError(`recordVoice: seconds must be in (0, 120], got ${seconds}`);
  const media = globalThis.navigator?.mediaDevices;
  if (!media?.getUserMedia) throw new TypeError('recordVoice: this browser has no microphone access (navigator.mediaDevices; it needs HTTPS or localhost)');
  signal?.throwIfAborted();
  const stream = await media.getUserMedia({
    audio: {
      channelCount: 1,
      echoCancellation: false,
      noiseSuppression: false,
      autoGainControl: false,
      ...(options.deviceId ? { deviceId: { exact: options.deviceId } } : {}),
    },
  });
  const context = new AudioContext();
  let stopCapture = () => {};
  try {
    signal?.throwIfAborted();
    const wanted = Math.round(seconds * context.sampleRate);
    const blocks: Float32Array[] = [];
    let collected = 0;
    const captured = new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const take = (block: Float32Array) => {
        if (collected >= wanted) return;
        blocks.push(block);
        collected += block.length;
        if (options.onProgress) {
          let peak = 0;
          for (const v of block) peak = Math.max(peak, Math.abs(v));
          options.onProgress({ elapsedSeconds: Math.min(collected, wanted) / context.sampleRate, peak });
        }
        if (collected >= wanted) {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }
      };
      startCapture(context, stream, options.capture, take).then((stop) => (stopCapture = stop), reject);
    });
    await context.resume();
    await captured;
    const samples = new Float32Array(wanted);
    let offset = 0;
    for (const block of blocks) {
      samples.set(block.subarray(0, wanted - offset), offset);
      offset += Math.min(block.length, wanted - offset);
    }
    const wav = encodeWav(resample(samples, context.sampleRate, VOICE_SAMPLE_RATE), VOICE_SAMPLE_RATE);
    return {
      wav,
      sampleRate: VOICE_SAMPLE_RATE,
      durationSeconds: (wav.length - 44) / 2 / VOICE_SAMPLE_RATE,
      captureSampleRate: context.sampleRate,
      toVoiceData: () => toVoiceData(wav),
    };
  } finally {
    stopCapture();
    for (const track of stream.getTracks()) track.stop();
    await context.close().catch(() => {});
  }
}

/** Connects the microphone to a capturing node that hands mono blocks to `take`; returns how to disconnect. */
async function startCapture(
  context: AudioContext,
  stream: MediaStream,
  preferred: RecordVoiceOptions['capture'],
  take: (block: Float32Array) => void,
): Promise<() => void> {
  const source = context.createMediaStreamSource(stream);
  const canWorklet = typeof AudioWorkletNode === 'function' && context.audioWorklet !== undefined;
  const canScriptProcessor = typeof context.createScriptProcessor === 'function';
  if (preferred !== 'script-processor' && canWorklet) {
    const url = URL.createObjectURL(new Blob([WORKLET], { type: 'text/javascript' }));
    try {
      await context.audioWorklet.addModule(url);
      // One explicit input channel: Web Audio downmixes a stereo microphone to mono.
      const node = new AudioWorkletNode(context, 'voxkey-recorder', { numberOfInputs: 1, numberOfOutputs: 1, channelCount: 1, channelCountMode: 'explicit' });
      node.port.onmessage = (event: MessageEvent<Float32Array>) => take(event.data);
      source.connect(node);
      // Connected to the output so that it is processed; it writes nothing, so nothing plays.
      node.connect(context.destination);
      return () => {
        source.disconnect();
        node.disconnect();
        node.port.onmessage = null;
      };
    } catch (error) {
      if (!canScriptProcessor) throw error;
    } finally {
      URL.revokeObjectURL(url);
    }
  }
  if (!canScriptProcessor) throw new TypeError('recordVoice: this browser has neither AudioWorklet nor ScriptProcessorNode');
  const node = context.createScriptProcessor(4096, 1, 1);
  node.onaudioprocess = (event) => take(event.inputBuffer.getChannelData(0).slice()); // the buffer is reused: copy
  source.connect(node);
  node.connect(context.destination);
  return () => {
    source.disconnect();
    node.disconnect();
    node.onaudioprocess = null;
  };
}
