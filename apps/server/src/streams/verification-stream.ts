import {
  encodeWav,
  LIMITS,
  type StreamDecoder,
  type VoiceEngine,
  type Voiceprint,
} from '@voxkey/engine';
import {
  STREAM_CLOSE_CODES,
  type StreamResultMessage,
  type StreamServerMessage,
  type StreamStart,
  streamCloseCodeFor,
} from '@voxkey/contract';
import type { AppDeps, AuthContext, OpenStream, StreamSocket } from '../deps.js';
import { ApiError } from '../errors.js';
import { findJobByRequest } from '../repositories/jobs.js';
import { findJobEventPayload } from '../repositories/webhooks.js';
import { openStreamDecoder } from './audio.js';
import { loadDecisionSettings } from '../decisions/settings.js';
import { loadVerificationSubject } from '../decisions/subject.js';
import type { JobPhrase } from '../services/phrases.js';
import { acceptRecording, checkVerificationStart } from '../services/voice-requests.js';

/** The engine calls a stream makes before its job: speech measurement for progress, probes for an early decision. */
export type StreamEngine = Pick<VoiceEngine, 'checkAudio' | 'verify'>;

/** What a stream's early-decision probes compare with: the user's samples and the threshold their job will apply. */
interface ProbeSubject {
  voiceprints: Voiceprint[];
  matchThreshold: number;
}

/** Loaded once at `start`; undefined when there is nothing to compare with (the job then decides, as for a posted request). */
async function loadProbeSubject(
  deps: AppDeps,
  orgId: number,
  externalId: string,
): Promise<ProbeSubject | undefined> {
  const subject = await loadVerificationSubject(deps, orgId, externalId);
  if (!subject || subject.samples.length === 0) return undefined;
  const { matchThreshold } = await loadDecisionSettings(deps, orgId);
  return { voiceprints: subject.samples, matchThreshold };
}

type State = 'awaiting_start' | 'starting' | 'streaming' | 'deciding' | 'closed';

/** Why the decision starts: the client's `end`, a confident probe, or the server shutting down. */
type FinishReason = 'end' | 'early' | 'shutdown';

/** Seconds of new audio between two speech measurements (and progress messages). */
const MEASURE_EVERY_S = 1;
const TICK_MS = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function padWithSilence(samples: Int16Array, length: number): Int16Array {
  if (samples.length >= length) return samples;
  const padded = new Int16Array(length);
  padded.set(samples);
  return padded;
}

export interface StreamSessionOptions {
  deps: AppDeps;
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>;
  socket: StreamSocket;
  engine: StreamEngine | undefined;
  /** The `start` message validated like a posted request's body; throws ApiError. */
  parseStart: (message: unknown) => StreamStart;
  onClosed: () => void;
}

/**
 * One verification stream: `start`, audio frames, progress and early-decision probes, then the
 * same job, record, outcome and webhook as a posted verification, whose payload is the `result`.
 */
export class VerificationStream implements OpenStream {
  private state: State = 'awaiting_start';
  private start?: StreamStart;
  private decoder?: StreamDecoder;
  private subject?: ProbeSubject;
  /** The phrase settled at `start` (a challenge is consumed then); null when none was named. */
  private phrase: JobPhrase | null = null;
  /** Mono PCM received so far, grown by doubling up to the longest stream allowed. */
  private pcm = new Int16Array(0);
  private samples = 0;
  private bytes = 0;
  private measuredSamples = 0;
  private probedSamples = 0;
  private netSpeech = 0;
  private analysing = false;
  /** Set when a probe was confident: the decision uses exactly the audio it probed. */
  private decidedSamples?: number;
  private progressSent = false;
  private audioSinceProgress = false;
  private socketOpen = true;
  private shuttingDown = false;
  private queue: Promise<void> = Promise.resolve();
  private idleTimer?: NodeJS.Timeout;
  private wallTimer?: NodeJS.Timeout;
  private tickTimer?: NodeJS.Timeout;
  private resolveDone!: () => void;
  /** Settles once the stream is over (result sent, error sent, or the client gone). */
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(private readonly options: StreamSessionOptions) {
    const { config } = options.deps;
    this.resetIdle();
    this.wallTimer = setTimeout(() => {
      if (this.state !== 'deciding')
        this.fail(
          new ApiError(
            'stream_timeout',
            `The stream stayed open longer than ${config.STREAM_MAX_WALL_MS / 1000} s without ending`,
          ),
        );
    }, config.STREAM_MAX_WALL_MS);
  }

  private get config() {
    return this.options.deps.config;
  }

  private get sampleRate(): number {
    return this.decoder?.sampleRate ?? this.start?.sample_rate ?? 16_000;
  }

  /** A text message: `start` or `end`. Handled in arrival order with the audio. */
  receiveText(text: string): void {
    if (this.state === 'closed') return;
    this.resetIdle();
    if (text.length > this.config.STREAM_MAX_FRAME_BYTES) {
      this.fail(
        new ApiError(
          'payload_too_large',
          `A message may be at most ${this.config.STREAM_MAX_FRAME_BYTES} bytes`,
        ),
      );
      return;
    }
    this.enqueue(() => this.handleText(text));
  }

  /** A binary message: audio. */
  receiveBinary(bytes: Uint8Array): void {
    if (this.state === 'closed' || this.state === 'deciding' || this.decidedSamples !== undefined)
      return;
    this.resetIdle();
    if (bytes.length > this.config.STREAM_MAX_FRAME_BYTES) {
      this.fail(
        new ApiError(
          'payload_too_large',
          `An audio frame may be at most ${this.config.STREAM_MAX_FRAME_BYTES} bytes; this one has ${bytes.length}`,
        ),
      );
      return;
    }
    this.bytes += bytes.length;
    if (this.bytes > this.config.STREAM_MAX_BYTES) {
      this.fail(
        new ApiError(
          'payload_too_large',
          `A stream may carry at most ${this.config.STREAM_MAX_BYTES} bytes of audio`,
        ),
      );
      return;
    }
    this.enqueue(async () => this.handleAudio(bytes));
  }

  /** The client went away. Before the decision that abandons the stream; after it, the job still completes and its webhook fires. */
  socketClosed(): void {
    this.socketOpen = false;
    if (this.state !== 'deciding') this.close();
  }

  /** Shutdown: finish the decision on the audio so far, send the result, close with 1001. */
  shutdown(): Promise<void> {
    this.shuttingDown = true;
    if (this.state === 'awaiting_start' || this.state === 'starting') {
      this.fail(
        new ApiError('unavailable', 'The server is shutting down; start the stream again'),
        STREAM_CLOSE_CODES.goingAway,
      );
    } else if (this.state === 'streaming') {
      this.enqueue(() => this.finish('shutdown'));
    }
    return this.done;
  }

  private enqueue(step: () => Promise<void> | void): void {
    this.queue = this.queue.then(async () => {
      if (this.state === 'closed') return;
      try {
        await step();
      } catch (err) {
        this.fail(err);
      }
    });
  }

  private async handleText(text: string): Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      throw new ApiError(
        'stream_protocol_error',
        'Text messages must be JSON: {"type":"start",...} or {"type":"end"}',
      );
    }
    const type =
      typeof message === 'object' && message !== null
        ? (message as { type?: unknown }).type
        : undefined;
    if (type === 'start') {
      if (this.state !== 'awaiting_start')
        throw new ApiError(
          'stream_protocol_error',
          'The stream has already started; send a second verification on a new stream',
        );
      return this.begin(message);
    }
    if (type === 'end') {
      if (this.state === 'awaiting_start')
        throw new ApiError(
          'stream_protocol_error',
          'The first message must be {"type":"start",...}',
        );
      if (this.state === 'streaming') await this.finish('end');
      return;
    }
    throw new ApiError(
      'stream_protocol_error',
      `Unknown message type ${JSON.stringify(type ?? null)}; expected "start" or "end"`,
    );
  }

  private async begin(message: unknown): Promise<void> {
    this.state = 'starting';
    const start = this.options.parseStart(message);
    const { deps, auth } = this.options;
    this.phrase = await checkVerificationStart(deps, auth.orgId, start);
    this.start = start;
    this.subject = await loadProbeSubject(deps, auth.orgId, start.external_id);
    const decoder = openStreamDecoder(start);
    this.decoder = decoder;
    await decoder.ready();
    if (this.state !== 'starting') return;
    this.state = 'streaming';
    this.tickTimer = setInterval(() => this.tick(), TICK_MS);
  }

  private async handleAudio(bytes: Uint8Array): Promise<void> {
    if (this.state === 'deciding' || this.decidedSamples !== undefined) return; // decided early: the rest of the audio is not needed
    if (this.state !== 'streaming' || !this.decoder)
      throw new ApiError(
        'stream_protocol_error',
        'Audio arrived before the {"type":"start",...} message',
      );
    const decoder = this.decoder;
    const samples = await decoder.push(bytes);
    if (samples.length === 0 || this.state !== 'streaming' || this.decidedSamples !== undefined)
      return;
    this.addSamples(samples);
    this.audioSinceProgress = true;
    // The first progress goes out at once, so a client sees its audio is arriving.
    if (!this.progressSent) this.sendProgress();
    this.analyse();
  }

  /** Keeps decoded samples, within the longest stream allowed. */
  private addSamples(samples: Int16Array): void {
    const maxSamples = Math.ceil(this.config.STREAM_MAX_AUDIO_SECONDS * this.sampleRate);
    if (this.samples + samples.length > maxSamples) {
      throw ApiError.field(
        'audio',
        'audio_too_long',
        `A stream may carry at most ${this.config.STREAM_MAX_AUDIO_SECONDS} s of audio; end it sooner`,
      );
    }
    this.append(samples, maxSamples);
  }

  private append(samples: Int16Array, maxSamples: number): void {
    const needed = this.samples + samples.length;
    if (needed > this.pcm.length) {
      const grown = new Int16Array(
        Math.min(maxSamples, Math.max(needed, this.pcm.length * 2, this.sampleRate * 4)),
      );
      grown.set(this.pcm.subarray(0, this.samples));
      this.pcm = grown;
    }
    this.pcm.set(samples, this.samples);
    this.samples = needed;
  }

  private tick(): void {
    if (this.state !== 'streaming') return;
    if (this.audioSinceProgress) this.sendProgress();
    this.analyse();
  }

  private sendProgress(): void {
    this.audioSinceProgress = false;
    this.progressSent = true;
    this.send({
      type: 'progress',
      received_s: round(this.samples / this.sampleRate),
      net_speech_s: round(this.netSpeech),
    });
  }

  /**
   * Measures the speech in each new second of audio (incremental VAD in the engine's pool, which
   * takes the PCM as it is), and once
   * there is enough speech probes the audio so far every STREAM_PROBE_EVERY_S seconds. One
   * analysis at a time per stream, so a stream never queues more than one engine task.
   */
  private analyse(): void {
    const engine = this.options.engine;
    if (!engine || this.analysing || this.state !== 'streaming') return;
    const rate = this.sampleRate;
    const newSamples = this.samples - this.measuredSamples;
    if (newSamples < MEASURE_EVERY_S * rate) return;
    this.analysing = true;
    const from = this.measuredSamples;
    const to = this.samples;
    void (async () => {
      try {
        const check = await engine.checkAudio({
          pcm: this.pcm.subarray(from, to),
          sampleRate: rate,
        });
        if (this.state !== 'streaming') return;
        this.netSpeech += check.netSpeechSeconds;
        this.measuredSamples = to;
        if (await this.probe(engine, to)) {
          this.decidedSamples = to;
          this.enqueue(() => this.finish('early'));
        }
      } catch (err) {
        this.options.deps.observability.logger.warn(
          { err, orgId: this.options.auth.orgId },
          'stream analysis failed; the decision waits for the end of the stream',
        );
        this.measuredSamples = to;
      } finally {
        this.analysing = false;
      }
    })();
  }

  /** Whether a probe of the audio up to `upTo` is far enough from the threshold to decide now. */
  private async probe(engine: StreamEngine, upTo: number): Promise<boolean> {
    const subject = this.subject;
    const rate = this.sampleRate;
    // A phrase is checked on the whole recording: deciding early could cut it short.
    if (!subject || this.phrase || this.netSpeech < LIMITS.minNetSpeechSeconds) return false;
    if (upTo - this.probedSamples < this.config.STREAM_PROBE_EVERY_S * rate) return false;
    this.probedSamples = upTo;
    // The speaker model embeds the speech as a whole, so a probe analyses all the audio so far; it only
    // times the decision (the job verifies the recording in full, deepfake check included), so no spoof check.
    const analysis = await engine.verify(
      { pcm: this.pcm.subarray(0, upTo), sampleRate: rate },
      subject.voiceprints,
      { threshold: subject.matchThreshold, spoofCheck: false },
    );
    this.netSpeech = Math.max(this.netSpeech, analysis.netSpeechSeconds);
    if (
      analysis.result === 'inconclusive' ||
      analysis.netSpeechSeconds < LIMITS.minNetSpeechSeconds
    )
      return false;
    const margin = this.config.STREAM_EARLY_MARGIN;
    const confident =
      analysis.matchScore >= subject.matchThreshold + margin ||
      analysis.matchScore <= subject.matchThreshold - margin;
    return confident && this.state === 'streaming';
  }

  /** The decision: the audio so far becomes a WAV recording and goes through the posted path's job. */
  private async finish(reason: FinishReason): Promise<void> {
    if (this.state !== 'streaming') return;
    this.state = 'deciding';
    clearInterval(this.tickTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.wallTimer);
    const start = this.start!;
    // The audio the decoder still holds (the last Ogg page), unless a probe already fixed the audio.
    const decoder = this.decoder;
    if (decoder && this.decidedSamples === undefined) this.addSamples(await decoder.flush());
    if (this.state !== 'deciding') return;
    const rate = this.sampleRate;
    this.decoder?.free();
    this.decoder = undefined;
    // After a confident probe, exactly the probed audio: the job's result is then the probe's.
    this.samples = this.decidedSamples ?? this.samples;
    if (this.samples === 0) {
      throw ApiError.field('audio', 'audio_too_short', 'The stream ended before any audio arrived');
    }
    // A stream shorter than the shortest recording is padded with silence, so it ends `inconclusive`
    // (too little speech) like a short recording instead of being refused.
    const minSamples = Math.ceil(LIMITS.minDurationSeconds * rate);
    const wav = encodeWav(padWithSilence(this.pcm.subarray(0, this.samples), minSamples), rate);
    this.pcm = new Int16Array(0);
    const { deps, auth } = this.options;
    deps.observability.logger.info(
      {
        orgId: auth.orgId,
        requestUuid: start.request_uuid,
        reason,
        audioSeconds: round(this.samples / rate),
      },
      'verification stream deciding',
    );
    const deadline = Date.now() + this.config.STREAM_RESULT_TIMEOUT_MS;
    // The audio exists nowhere else, so a transient failure (a database pool busy under load) is
    // tried again rather than losing the verification; acceptRecording is idempotent by request_uuid.
    await this.retryTransient(deadline, start.request_uuid, () =>
      acceptRecording(
        deps,
        auth,
        'verification',
        {
          external_id: start.external_id,
          request_uuid: start.request_uuid,
          language: start.language,
          device_fingerprint: start.device_fingerprint,
          device_type: start.device_type,
          challenge_id: start.challenge_id,
          text_id: start.text_id,
        },
        () => wav,
        { settledPhrase: this.phrase },
      ),
    );
    const payload = await this.waitForOutcome(start.request_uuid, deadline);
    this.send({ type: 'result', final: true, ...payload });
    this.close(this.shuttingDown ? STREAM_CLOSE_CODES.goingAway : STREAM_CLOSE_CODES.normal);
  }

  /**
   * Runs `step` again after a failure that is not an API error (a database pool busy under load),
   * with a growing pause, until `deadline`; the steps given are idempotent.
   */
  private async retryTransient<T>(
    deadline: number,
    requestUuid: string,
    step: () => Promise<T>,
  ): Promise<T> {
    let pause = 100;
    for (;;) {
      try {
        return await step();
      } catch (err) {
        if (err instanceof ApiError || Date.now() + pause >= deadline) throw err;
        this.options.deps.observability.logger.warn(
          { err, orgId: this.options.auth.orgId, requestUuid },
          'verification stream: a database step failed; trying again',
        );
        await sleep(pause);
        pause = Math.min(2000, pause * 2);
      }
    }
  }

  /** The job's `verification.completed` payload, read back once the job has completed (a failed read is tried again). */
  private async waitForOutcome(
    requestUuid: string,
    deadline: number,
  ): Promise<Omit<StreamResultMessage, 'type' | 'final'>> {
    const { deps, auth } = this.options;
    let pause = 20;
    while (Date.now() < deadline) {
      try {
        const job = await findJobByRequest(deps.database.db, auth.orgId, requestUuid);
        if (job && (job.status === 'completed' || job.status === 'failed')) {
          const payload = await findJobEventPayload(deps.database.db, auth.orgId, job.id);
          if (payload) return JSON.parse(payload) as Omit<StreamResultMessage, 'type' | 'final'>;
        }
      } catch (err) {
        deps.observability.logger.warn(
          { err, orgId: auth.orgId, requestUuid },
          'verification stream: reading the outcome failed; trying again',
        );
      }
      await sleep(pause);
      pause = Math.min(250, Math.round(pause * 1.5));
    }
    throw new ApiError(
      'unavailable',
      `The decision is taking longer than ${this.config.STREAM_RESULT_TIMEOUT_MS / 1000} s; it will arrive by webhook and in GET .../verifications/${requestUuid}`,
    );
  }

  private resetIdle(): void {
    clearTimeout(this.idleTimer);
    if (this.state === 'deciding' || this.state === 'closed') return;
    this.idleTimer = setTimeout(
      () =>
        this.fail(
          new ApiError(
            'stream_timeout',
            `Nothing arrived for ${this.config.STREAM_IDLE_TIMEOUT_MS / 1000} s`,
          ),
        ),
      this.config.STREAM_IDLE_TIMEOUT_MS,
    );
  }

  private send(message: StreamServerMessage): void {
    if (!this.socketOpen) return;
    const { socket } = this.options;
    if (socket.bufferedAmount > this.config.STREAM_MAX_BUFFERED_BYTES) {
      // The client does not read: it cannot receive an error either.
      this.options.deps.observability.logger.warn(
        { orgId: this.options.auth.orgId },
        'verification stream client is not reading; connection dropped',
      );
      socket.terminate();
      this.socketOpen = false;
      if (this.state !== 'deciding') this.close();
      return;
    }
    socket.send(JSON.stringify(message));
  }

  /** Sends the error (the REST API's body plus `type`) and closes with 4000 + its status. */
  private fail(err: unknown, closeCode?: number): void {
    if (this.state === 'closed') return;
    if (err instanceof ApiError) {
      this.send({ type: 'error', ...err.toBody() });
      this.close(closeCode ?? streamCloseCodeFor(err.status));
    } else {
      this.options.deps.observability.logger.error(
        { err, orgId: this.options.auth.orgId },
        'verification stream failed',
      );
      this.send({
        type: 'error',
        code: 500,
        error: 'internal_error',
        message: 'Internal server error',
      });
      this.close(STREAM_CLOSE_CODES.internalError);
    }
  }

  private close(code?: number): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearInterval(this.tickTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.wallTimer);
    this.decoder?.free();
    this.decoder = undefined;
    this.pcm = new Int16Array(0);
    if (this.socketOpen && code !== undefined) this.options.socket.close(code);
    this.socketOpen = false;
    this.options.onClosed();
    this.resolveDone();
  }
}
