// @ts-check
/**
 * The web demo's page script: record the microphone with Web Audio, turn it into a 16 kHz mono
 * 16-bit WAV here in the browser, send it to the demo backend (which calls Voxkey with its own
 * token), and show the webhook's result as it arrives over server-sent events.
 */

const TARGET_RATE = 16000;
/** Recordings per enrolment: one voiceprint built from several takes matches more reliably. */
const SAMPLES = 3;
/** Takes of one sample before giving up (each is pre-checked; an unusable take is recorded again). */
const ATTEMPTS = 3;

/** @template {HTMLElement} T @param {string} id @returns {T} */
function $(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing`);
  return /** @type {T} */ (el);
}

const externalIdInput = /** @type {HTMLInputElement} */ ($('external-id'));
const secondsInput = /** @type {HTMLInputElement} */ ($('seconds'));
const enrolButton = /** @type {HTMLButtonElement} */ ($('enrol'));
const verifyButton = /** @type {HTMLButtonElement} */ ($('verify'));
const statusBox = $('status');
const level = /** @type {HTMLMeterElement} */ ($('level'));
const outcome = $('outcome');

/** @param {string} text @param {'idle' | 'recording' | 'sending' | 'waiting' | 'done' | 'error'} phase */
function setStatus(text, phase) {
  statusBox.textContent = text;
  statusBox.dataset.phase = phase;
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()} ${text}`;
  $('log').append(item);
}

/** @param {{ kind: string; result: string; score?: string; deepfake?: string; samples?: string; requestUuid?: string }} o */
function showOutcome(o) {
  outcome.dataset.kind = o.kind;
  outcome.dataset.result = o.result;
  $('result').textContent = o.result;
  $('match-score').textContent = o.score ?? '–';
  $('deepfake').textContent = o.deepfake ?? '–';
  $('deepfake').dataset.flag = o.deepfake === 'yes' ? 'true' : 'false';
  $('samples').textContent = o.samples ?? '–';
  $('request-uuid').textContent = o.requestUuid ?? '–';
}

// --------------------------------------------------------------------------------------------
// Recording
// --------------------------------------------------------------------------------------------

/**
 * Records `seconds` of the microphone; resolves with mono samples at the AudioContext's rate.
 * @param {number} seconds
 * @returns {Promise<{ samples: Float32Array; sampleRate: number }>}
 */
async function record(seconds) {
  const stream = await navigator.mediaDevices.getUserMedia({
    // Raw speech is best for voice biometrics: no echo cancellation, noise suppression or gain.
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext();
  try {
    const source = context.createMediaStreamSource(stream);
    // A ScriptProcessorNode hands us the samples on the main thread. (An AudioWorklet is the
    // modern way, but its rendering stalled in headless Chromium in containers, where this demo
    // is tested; a few seconds of mono audio are no load for the main thread.)
    const recorder = context.createScriptProcessor(4096, 1, 1);
    /** @type {Float32Array[]} */
    const blocks = [];
    let collected = 0;
    const wanted = Math.round(seconds * context.sampleRate);
    const done = new Promise((resolve) => {
      recorder.onaudioprocess = (event) => {
        if (collected >= wanted) return;
        const block = event.inputBuffer.getChannelData(0).slice(); // the buffer is reused: copy
        blocks.push(block);
        collected += block.length;
        let peak = 0;
        for (const v of block) peak = Math.max(peak, Math.abs(v));
        level.value = peak;
        const left = Math.max(0, Math.ceil((wanted - collected) / context.sampleRate));
        statusBox.textContent = `Recording… ${left} s left. Speak now.`;
        if (collected >= wanted) resolve(undefined);
      };
    });
    source.connect(recorder);
    // The processor only runs while connected to the output; it writes nothing, so nothing plays.
    recorder.connect(context.destination);
    await context.resume();
    await done;
    source.disconnect();
    recorder.disconnect();
    const samples = new Float32Array(collected);
    let offset = 0;
    for (const block of blocks) {
      samples.set(block, offset);
      offset += block.length;
    }
    return { samples: samples.subarray(0, wanted), sampleRate: context.sampleRate };
  } finally {
    level.value = 0;
    for (const track of stream.getTracks()) track.stop();
    await context.close();
  }
}

/**
 * Resamples to `toRate` with a windowed-sinc low-pass filter evaluated at each output instant:
 * the filter's cut-off (90 % of the new Nyquist frequency) removes what would alias, and the
 * filtered signal is read at the output sample times (decimation by any ratio, e.g. 48 or 44.1 kHz
 * to 16 kHz).
 * @param {Float32Array} input
 * @param {number} fromRate
 * @param {number} toRate
 * @returns {Float32Array}
 */
export function resample(input, fromRate, toRate) {
  if (fromRate === toRate) return input.slice();
  const ratio = fromRate / toRate;
  const cutoff = (0.9 * Math.min(1, 1 / ratio)) / 2; // cycles per input sample
  const halfWidth = Math.ceil(16 * Math.max(1, ratio)); // taps each side, in input samples
  const output = new Float32Array(Math.floor(input.length / ratio));
  for (let n = 0; n < output.length; n++) {
    const t = n * ratio; // output instant, in input samples
    const first = Math.max(0, Math.ceil(t - halfWidth));
    const last = Math.min(input.length - 1, Math.floor(t + halfWidth));
    let sum = 0;
    let weights = 0;
    for (let k = first; k <= last; k++) {
      const x = k - t;
      const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
      const window = 0.42 + 0.5 * Math.cos((Math.PI * x) / halfWidth) + 0.08 * Math.cos((2 * Math.PI * x) / halfWidth); // Blackman
      const w = sinc * window;
      sum += /** @type {number} */ (input[k]) * w;
      weights += w;
    }
    output[n] = weights > 0 ? sum / weights : 0; // normalised: unity gain at DC, also at the edges
  }
  return output;
}

/**
 * 16-bit PCM mono WAV.
 * @param {Float32Array} samples
 * @param {number} sampleRate
 * @returns {Uint8Array<ArrayBuffer>}
 */
export function encodeWav(samples, sampleRate) {
  const bytes = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(bytes.buffer);
  const ascii = (/** @type {number} */ offset, /** @type {string} */ text) => {
    for (let i = 0; i < text.length; i++) view.setUint8(offset + i, text.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // byte rate
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  ascii(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, /** @type {number} */ (samples[i])));
    view.setInt16(44 + i * 2, s < 0 ? Math.round(s * 0x8000) : Math.round(s * 0x7fff), true);
  }
  return bytes;
}

// --------------------------------------------------------------------------------------------
// Enrol / verify
// --------------------------------------------------------------------------------------------

/**
 * Waits for the webhook's event for this request, pushed by the backend over SSE.
 * @param {string} requestUuid
 * @returns {Promise<any>}
 */
function waitForResult(requestUuid) {
  return new Promise((resolve, reject) => {
    const events = new EventSource(`/api/events/${encodeURIComponent(requestUuid)}`);
    events.addEventListener('result', (message) => {
      events.close();
      resolve(JSON.parse(/** @type {MessageEvent<string>} */ (message).data));
    });
    events.onerror = () => {
      // EventSource reconnects by itself while the backend is reachable; give up when closed.
      if (events.readyState === EventSource.CLOSED) reject(new Error('lost the connection to the demo backend'));
    };
  });
}

/**
 * Shows what Voxkey's pre-check found in a take, problems first.
 * @param {{ usable: boolean; duration_s: number; net_speech_s: number; snr_db: number | null; problems: { code: string; message: string }[] }} check
 */
function showPrecheck(check) {
  const snr = check.snr_db === null ? 'n/a' : `${check.snr_db.toFixed(1)} dB`;
  $('precheck-summary').textContent = `${check.usable ? 'Usable' : 'Not usable'}: ${check.duration_s.toFixed(1)} s, ${check.net_speech_s.toFixed(1)} s of speech, SNR ${snr}`;
  $('precheck').dataset.usable = String(check.usable);
  $('problems').replaceChildren(
    ...check.problems.map((problem) => {
      const item = document.createElement('li');
      item.dataset.code = problem.code;
      item.textContent = `${problem.code}: ${problem.message}`;
      return item;
    }),
  );
}

/**
 * Records a take and turns it into the 16 kHz WAV that is sent.
 * @param {number} seconds
 * @param {string} label
 */
async function recordWav(seconds, label) {
  setStatus(`${label}: recording ${seconds} s… Speak now.`, 'recording');
  const { samples, sampleRate } = await record(seconds);
  return encodeWav(resample(samples, sampleRate, TARGET_RATE), TARGET_RATE);
}

/**
 * POSTs a recording to the backend and parses its JSON answer; throws with the message on an error.
 * @param {string} url
 * @param {Uint8Array<ArrayBuffer>} wav
 * @returns {Promise<any>}
 */
async function post(url, wav) {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'audio/wav' }, body: wav });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.message ?? `HTTP ${response.status}`);
  return answer;
}

/**
 * Sends one enrolment or verification and waits for its webhook's event.
 * @param {'enrol' | 'verify'} kind
 * @param {string} externalId
 * @param {Uint8Array<ArrayBuffer>} wav
 * @param {string} [mode]
 */
async function submitAndWait(kind, externalId, wav, mode) {
  const query = `external_id=${encodeURIComponent(externalId)}${mode ? `&mode=${mode}` : ''}`;
  const answer = await post(`/api/${kind}?${query}`, wav);
  const requestUuid = /** @type {string} */ (answer.request_uuid);
  $('request-uuid').textContent = requestUuid;
  return { requestUuid, event: await waitForResult(requestUuid) };
}

/**
 * Records SAMPLES takes, each pre-checked by Voxkey (an unusable take is shown with its problems
 * and recorded again), then enrols them: the first replaces any earlier voiceprint of this user id
 * (so the demo can enrol the same id again), the others are added to it.
 * @param {string} externalId
 * @param {number} seconds
 */
async function enrol(externalId, seconds) {
  /** @type {Uint8Array<ArrayBuffer>[]} */
  const takes = [];
  for (let sample = 1; sample <= SAMPLES; sample++) {
    const label = `Sample ${sample} of ${SAMPLES}`;
    for (let attempt = 1; ; attempt++) {
      const wav = await recordWav(seconds, label);
      setStatus(`${label}: checking the recording…`, 'sending');
      const check = await post('/api/check', wav);
      showPrecheck(check);
      if (check.usable) {
        takes.push(wav);
        break;
      }
      const why = check.problems.map((/** @type {{ message: string }} */ p) => p.message).join('; ');
      if (attempt >= ATTEMPTS) throw new Error(`${label} was not usable in ${ATTEMPTS} takes (${why}). Check the microphone and try again.`);
      setStatus(`${label} is not usable: ${why}. Recording it again…`, 'recording');
    }
  }
  /** @type {{ event: any; requestUuid: string } | undefined} */
  let enrolled;
  /** @type {{ event: any; requestUuid: string } | undefined} */
  let last;
  const failures = [];
  for (const [index, wav] of takes.entries()) {
    // A failed sample stores nothing (a failed `add` leaves the voiceprint as it was), so the next
    // one starts the voiceprint when none succeeded yet.
    const mode = enrolled ? 'add' : 'replace';
    setStatus(`Enrolling sample ${index + 1} of ${SAMPLES} (${mode}); waiting for the result…`, 'waiting');
    last = await submitAndWait('enrol', externalId, wav, mode);
    if (last.event.status === 'enrolled') enrolled = last;
    else failures.push(`sample ${index + 1}: ${last.event.failure_reason}`);
  }
  const { event, requestUuid } = enrolled ?? /** @type {{ event: any; requestUuid: string }} */ (last);
  showOutcome({ kind: 'enrol', result: event.status, samples: String(event.samples), requestUuid });
  const failed = failures.length ? ` (not stored: ${failures.join(', ')})` : '';
  setStatus(
    event.status === 'enrolled'
      ? `Enrolled “${externalId}” with ${event.samples} recordings${failed}. Now press “Record & verify”.`
      : `Enrolment failed${failed}. Try again.`,
    event.status === 'enrolled' ? 'done' : 'error',
  );
}

/**
 * @param {string} externalId
 * @param {number} seconds
 */
async function verify(externalId, seconds) {
  const wav = await recordWav(seconds, 'Verification');
  setStatus(`Recorded ${seconds} s (${Math.round(wav.length / 1024)} KiB WAV at 16 kHz); sending…`, 'sending');
  const { event, requestUuid } = await submitAndWait('verify', externalId, wav);
  showOutcome({
    kind: 'verify',
    result: event.result,
    score: Number(event.match_score).toFixed(3),
    deepfake: event.deepfake_detected ? 'yes' : 'no',
    requestUuid,
  });
  // Grant access only when verified AND no deepfake was detected; inconclusive means "try again".
  const message = event.deepfake_detected
    ? `Denied: a deepfake or replay is suspected (result ${event.result}).`
    : event.result === 'verified'
      ? `Verified: this is “${externalId}”.`
      : event.result === 'rejected'
        ? `Rejected: the voice does not match “${externalId}”.`
        : 'Inconclusive: not enough clear speech; try again.';
  setStatus(message, 'done');
}

/** @param {'enrol' | 'verify'} kind */
async function run(kind) {
  const externalId = externalIdInput.value.trim();
  if (!externalId) {
    setStatus('Enter a user id first.', 'error');
    return;
  }
  const seconds = Math.min(30, Math.max(3, Number(secondsInput.value) || 7));
  enrolButton.disabled = verifyButton.disabled = true;
  showOutcome({ kind, result: '–' });
  try {
    if (kind === 'enrol') await enrol(externalId, seconds);
    else await verify(externalId, seconds);
  } catch (error) {
    showOutcome({ kind, result: 'error' });
    setStatus(`Error: ${error instanceof Error ? error.message : String(error)}`, 'error');
  } finally {
    enrolButton.disabled = verifyButton.disabled = false;
  }
}

enrolButton.addEventListener('click', () => void run('enrol'));
verifyButton.addEventListener('click', () => void run('verify'));
document.body.dataset.ready = 'true';
