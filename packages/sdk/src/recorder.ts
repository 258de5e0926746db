/**
 * The browser microphone recorder. It imports nothing outside this package, so the build also ships
 * it as one self-contained ES module (`@voxkey/sdk/recorder`) that a page can load without a bundler.
 */
import { toVoiceData } from './voice.js';
import { encodeWav, resample, VOICE_SAMPLE_RATE, type WavBytes } from './wav.js';

export { encodeWav, resample, VOICE_SAMPLE_RATE, type WavBytes } from './wav.js';

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
   * `ScriptProcessorNode`. The ScriptProcessor takes over when the worklet is missing, cannot load
   * (for example a Content-Security-Policy without `blob:` for worklets) or delivers nothing.
   */
  capture?: 'audio-worklet' | 'script-processor';
}

export interface VoiceRecording {
  /** A 16 kHz mono 16-bit PCM WAV file (a request body as it is: `fetch(url, { method: 'POST', body: recording.wav })`). */
  wav: WavBytes;
  /** Always 16000. */
  sampleRate: number;
  durationSeconds: number;
  /** The rate the browser captured at before resampling (often 48000 or 44100). */
  captureSampleRate: number;
  /** Which node captured the samples. */
  capture: 'audio-worklet' | 'script-processor';
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
  if (!(typeof seconds === 'number' && seconds > 0 && seconds <= 120))
    throw new RangeError(`recordVoice: seconds must be in (0, 120], got ${seconds}`);
  const media = globalThis.navigator?.mediaDevices;
  if (!media?.getUserMedia)
    throw new TypeError(
      'recordVoice: this browser has no microphone access (navigator.mediaDevices; it needs HTTPS or localhost)',
    );
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
  let capture: Capture | undefined;
  let onAbort = () => {};
  try {
    signal?.throwIfAborted();
    const wanted = Math.round(seconds * context.sampleRate);
    const blocks: Float32Array[] = [];
    let collected = 0;
    let started!: () => void;
    const firstBlock = new Promise<boolean>((resolve) => (started = () => resolve(true)));
    let done!: () => void;
    const captured = new Promise<void>((resolve, reject) => {
      done = resolve;
      onAbort = () => reject(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    const take = (block: Float32Array) => {
      if (collected >= wanted) return;
      started();
      blocks.push(block);
      collected += block.length;
      if (options.onProgress) {
        let peak = 0;
        for (const v of block) peak = Math.max(peak, Math.abs(v));
        options.onProgress({
          elapsedSeconds: Math.min(collected, wanted) / context.sampleRate,
          peak,
        });
      }
      if (collected >= wanted) done();
    };
    const source = context.createMediaStreamSource(stream);
    capture = await startCapture(context, source, options.capture ?? 'audio-worklet', take);
    await Promise.race([context.resume(), captured]);
    if (capture.kind === 'audio-worklet' && typeof context.createScriptProcessor === 'function') {
      // A worklet that loaded but never runs (seen in some headless containers) would hang the recording: switch.
      const running = await Promise.race([
        firstBlock,
        captured.then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), WORKLET_STALL_MS)),
      ]);
      if (!running) {
        capture.stop();
        capture = await startCapture(context, source, 'script-processor', take);
      }
    }
    await captured;
    const samples = new Float32Array(wanted);
    let offset = 0;
    for (const block of blocks) {
      samples.set(block.subarray(0, wanted - offset), offset);
      offset += Math.min(block.length, wanted - offset);
    }
    const wav = encodeWav(
      resample(samples, context.sampleRate, VOICE_SAMPLE_RATE),
      VOICE_SAMPLE_RATE,
    );
    return {
      wav,
      sampleRate: VOICE_SAMPLE_RATE,
      durationSeconds: (wav.length - 44) / 2 / VOICE_SAMPLE_RATE,
      captureSampleRate: context.sampleRate,
      capture: capture.kind,
      toVoiceData: () => toVoiceData(wav),
    };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    capture?.stop();
    for (const track of stream.getTracks()) track.stop();
    await context.close().catch(() => {});
  }
}

/** Where `streamVoice` sends the microphone: a `voxkey.verifications.stream(...)` (any object alike). */
export interface VoiceStreamTarget {
  send(chunk: ArrayBufferView): void;
  end(): void;
  readonly result: Promise<unknown>;
}

export interface StreamVoiceOptions {
  /** Stops after this many seconds (then sends `end`); default 20, at most 60. */
  maxSeconds?: number;
  /** Seconds of audio per message; default 0.25. */
  chunkSeconds?: number;
  /** Stops streaming and releases the microphone; the signal's reason is thrown. */
  signal?: AbortSignal;
  deviceId?: string;
  onProgress?: RecordVoiceOptions['onProgress'];
  capture?: RecordVoiceOptions['capture'];
}

export interface StreamedVoice {
  /** Seconds of audio sent. */
  durationSeconds: number;
  captureSampleRate: number;
  capture: 'audio-worklet' | 'script-processor';
}

/**
 * Streams the microphone into a verification stream as 16 kHz mono 16-bit PCM (`pcm_s16le`, the
 * stream's default) until the stream has its result, `maxSeconds` pass (then it sends `end`), or
 * `signal` aborts. The microphone is released before it returns; await the stream for the result.
 *
 * ```ts
 * import { createVoxkeyClient, streamVoice } from '@voxkey/sdk/browser';
 * const stream = voxkey.verifications.stream({ external_id: 'customer-42' });
 * await streamVoice(stream, { maxSeconds: 15 });
 * const { result } = await stream;
 * ```
 */
export async function streamVoice(
  target: VoiceStreamTarget,
  options: StreamVoiceOptions = {},
): Promise<StreamedVoice> {
  const maxSeconds = options.maxSeconds ?? 20;
  if (!(maxSeconds > 0 && maxSeconds <= 60))
    throw new RangeError(`streamVoice: maxSeconds must be in (0, 60], got ${maxSeconds}`);
  const chunkSeconds = options.chunkSeconds ?? 0.25;
  const { signal } = options;
  const media = globalThis.navigator?.mediaDevices;
  if (!media?.getUserMedia)
    throw new TypeError(
      'streamVoice: this browser has no microphone access (navigator.mediaDevices; it needs HTTPS or localhost)',
    );
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
  let capture: Capture | undefined;
  let onAbort = () => {};
  try {
    const rate = context.sampleRate;
    const wanted = Math.round(maxSeconds * rate);
    const perChunk = Math.max(128, Math.round(chunkSeconds * rate));
    let pending: Float32Array[] = [];
    let pendingLength = 0;
    let collected = 0;
    let sentSamples = 0;
    let done!: () => void;
    let started!: () => void;
    const firstBlock = new Promise<boolean>((resolve) => (started = () => resolve(true)));
    const finished = new Promise<void>((resolve, reject) => {
      done = resolve;
      onAbort = () => reject(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    let over = false;
    void target.result.then(
      () => done(),
      () => done(),
    );
    const flush = () => {
      if (pendingLength === 0) return;
      const block = new Float32Array(pendingLength);
      let offset = 0;
      for (const part of pending) {
        block.set(part, offset);
        offset += part.length;
      }
      pending = [];
      pendingLength = 0;
      const resampled = resample(block, rate, VOICE_SAMPLE_RATE);
      const pcm = new Int16Array(resampled.length);
      for (let i = 0; i < resampled.length; i++)
        pcm[i] = Math.round(Math.max(-1, Math.min(1, resampled[i]!)) * 32767);
      sentSamples += pcm.length;
      target.send(pcm);
    };
    const take = (block: Float32Array) => {
      if (over) return;
      started();
      const part = block.subarray(0, Math.min(block.length, wanted - collected));
      pending.push(part);
      pendingLength += part.length;
      collected += part.length;
      if (options.onProgress) {
        let peak = 0;
        for (const v of part) peak = Math.max(peak, Math.abs(v));
        options.onProgress({ elapsedSeconds: collected / rate, peak });
      }
      if (pendingLength >= perChunk) flush();
      if (collected >= wanted) {
        over = true;
        flush();
        target.end();
      }
    };
    const source = context.createMediaStreamSource(stream);
    capture = await startCapture(context, source, options.capture ?? 'audio-worklet', take);
    await Promise.race([context.resume(), finished]);
    if (capture.kind === 'audio-worklet' && typeof context.createScriptProcessor === 'function') {
      const running = await Promise.race([
        firstBlock,
        finished.then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), WORKLET_STALL_MS)),
      ]);
      if (!running) {
        capture.stop();
        capture = await startCapture(context, source, 'script-processor', take);
      }
    }
    await finished;
    over = true;
    return {
      durationSeconds: sentSamples / VOICE_SAMPLE_RATE,
      captureSampleRate: rate,
      capture: capture.kind,
    };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    capture?.stop();
    for (const track of stream.getTracks()) track.stop();
    await context.close().catch(() => {});
  }
}

/** How long an AudioWorklet may stay silent after the context started before the ScriptProcessor takes over. */
const WORKLET_STALL_MS = 1500;

interface Capture {
  kind: 'audio-worklet' | 'script-processor';
  stop(): void;
}

/** Connects the microphone to a capturing node that hands mono blocks to `take`. */
async function startCapture(
  context: AudioContext,
  source: MediaStreamAudioSourceNode,
  preferred: 'audio-worklet' | 'script-processor',
  take: (block: Float32Array) => void,
): Promise<Capture> {
  const canWorklet = typeof AudioWorkletNode === 'function' && context.audioWorklet !== undefined;
  const canScriptProcessor = typeof context.createScriptProcessor === 'function';
  if (preferred === 'audio-worklet' && canWorklet) {
    const url = URL.createObjectURL(new Blob([WORKLET], { type: 'text/javascript' }));
    try {
      await context.audioWorklet.addModule(url);
      // One explicit input channel: Web Audio downmixes a stereo microphone to mono.
      const node = new AudioWorkletNode(context, 'voxkey-recorder', {
        numberOfInputs: 1,
        numberOfOutputs: 1,
        channelCount: 1,
        channelCountMode: 'explicit',
      });
      node.port.onmessage = (event: MessageEvent<Float32Array>) => take(event.data);
      source.connect(node);
      // Connected to the output so that it is processed; it writes nothing, so nothing plays.
      node.connect(context.destination);
      return {
        kind: 'audio-worklet',
        stop() {
          node.port.onmessage = null;
          source.disconnect();
          node.disconnect();
        },
      };
    } catch (error) {
      if (!canScriptProcessor) throw error;
    } finally {
      URL.revokeObjectURL(url);
    }
  }
  if (!canScriptProcessor)
    throw new TypeError(
      'recordVoice: this browser has neither AudioWorklet nor ScriptProcessorNode',
    );
  const node = context.createScriptProcessor(4096, 1, 1);
  node.onaudioprocess = (event) => take(event.inputBuffer.getChannelData(0).slice()); // the buffer is reused: copy
  source.connect(node);
  node.connect(context.destination);
  return {
    kind: 'script-processor',
    stop() {
      node.onaudioprocess = null;
      source.disconnect();
      node.disconnect();
    },
  };
}
