// @ts-check
/**
 * The web demo's page script: record the microphone as a 16 kHz mono 16-bit WAV with the SDK's
 * `recordVoice` (`@voxkey/sdk/recorder`, which the backend serves from the installed package),
 * send it to the demo backend (which calls Voxkey with its own token), and show the webhook's
 * result as it arrives over server-sent events. Or stream the microphone with the SDK's
 * `streamVoice` over a WebSocket to the backend, which relays it to Voxkey's verification stream,
 * and show Voxkey's progress messages and its result as they come back.
 */
import { recordVoice, streamVoice } from './vendor/voxkey-sdk-recorder.js';

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
const streamButton = /** @type {HTMLButtonElement} */ ($('verify-stream'));
const buttons = [enrolButton, verifyButton, streamButton];
const statusBox = $('status');
const level = /** @type {HTMLMeterElement} */ ($('level'));
const outcome = $('outcome');

/** @typedef {'verified' | 'rejected' | 'deepfake' | 'phrase' | 'inconclusive'} Verdict */
/** @typedef {{ expected: string; transcript: string; match_score: number; matched: boolean } | null} PhraseCheck */

/**
 * @param {string} text
 * @param {'idle' | 'recording' | 'streaming' | 'sending' | 'waiting' | 'done' | 'error'} phase
 * @param {Verdict} [verdict] a verification's outcome, which picks the banner's colour
 */
function setStatus(text, phase, verdict) {
  statusBox.textContent = text;
  statusBox.dataset.phase = phase;
  if (verdict) statusBox.dataset.verdict = verdict;
  else delete statusBox.dataset.verdict;
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()} ${text}`;
  $('log').append(item);
}

/** @param {{ kind: string; result: string; score?: string; deepfake?: string; phrase?: PhraseCheck; samples?: string; requestUuid?: string }} o */
function showOutcome(o) {
  outcome.dataset.kind = o.kind;
  outcome.dataset.result = o.result;
  $('result').textContent = o.result;
  $('match-score').textContent = o.score ?? '–';
  $('deepfake').textContent = o.deepfake ?? '–';
  $('deepfake').dataset.flag = o.deepfake === 'yes' ? 'true' : 'false';
  const phrase = $('phrase');
  phrase.textContent = o.phrase
    ? `${o.phrase.matched ? 'matched' : 'not matched'}: heard “${o.phrase.transcript}” (match ${o.phrase.match_score.toFixed(2)})`
    : '–';
  if (o.phrase) phrase.dataset.matched = String(o.phrase.matched);
  else delete phrase.dataset.matched;
  $('samples').textContent = o.samples ?? '–';
  $('request-uuid').textContent = o.requestUuid ?? '–';
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
      if (events.readyState === EventSource.CLOSED)
        reject(new Error('lost the connection to the demo backend'));
    };
  });
}

/**
 * Shows what Voxkey's pre-check found in a take, problems first.
 * @param {{ usable: boolean; duration_s: number; net_speech_s: number; snr_db: number | null; problems: { code: string; message: string }[] }} check
 */
function showPrecheck(check) {
  const snr = check.snr_db === null ? 'n/a' : `${check.snr_db.toFixed(1)} dB`;
  $('precheck-summary').textContent =
    `${check.usable ? 'Usable' : 'Not usable'}: ${check.duration_s.toFixed(1)} s, ${check.net_speech_s.toFixed(1)} s of speech, SNR ${snr}`;
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
 * Records a take: the 16 kHz mono WAV that is sent, with a level meter and a countdown meanwhile.
 * @param {number} seconds
 * @param {string} label
 */
async function recordWav(seconds, label) {
  setStatus(`${label}: recording ${seconds} s… Speak now.`, 'recording');
  try {
    const recording = await recordVoice({
      seconds,
      onProgress: ({ elapsedSeconds, peak }) => {
        level.value = peak;
        statusBox.textContent = `Recording… ${Math.ceil(seconds - elapsedSeconds)} s left. Speak now.`;
      },
    });
    console.info(
      `recorded ${recording.durationSeconds} s at ${recording.captureSampleRate} Hz through the ${recording.capture}`,
    );
    return recording.wav;
  } finally {
    level.value = 0;
  }
}

/**
 * POSTs a recording to the backend and parses its JSON answer; throws with the message on an error.
 * @param {string} url
 * @param {Uint8Array<ArrayBuffer>} wav
 * @returns {Promise<any>}
 */
async function post(url, wav) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'audio/wav' },
    body: wav,
  });
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
 * @param {string} [challengeId] the one-time phrase the recording should say
 */
async function submitAndWait(kind, externalId, wav, mode, challengeId) {
  const query =
    `external_id=${encodeURIComponent(externalId)}${mode ? `&mode=${mode}` : ''}` +
    (challengeId ? `&challenge_id=${encodeURIComponent(challengeId)}` : '');
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
      const why = check.problems
        .map((/** @type {{ message: string }} */ p) => p.message)
        .join('; ');
      if (attempt >= ATTEMPTS)
        throw new Error(
          `${label} was not usable in ${ATTEMPTS} takes (${why}). Check the microphone and try again.`,
        );
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
    setStatus(
      `Enrolling sample ${index + 1} of ${SAMPLES} (${mode}); waiting for the result…`,
      'waiting',
    );
    last = await submitAndWait('enrol', externalId, wav, mode);
    if (last.event.status === 'enrolled') enrolled = last;
    else failures.push(`sample ${index + 1}: ${last.event.failure_reason}`);
  }
  const { event, requestUuid } =
    enrolled ?? /** @type {{ event: any; requestUuid: string }} */ (last);
  showOutcome({ kind: 'enrol', result: event.status, samples: String(event.samples), requestUuid });
  const failed = failures.length ? ` (not stored: ${failures.join(', ')})` : '';
  setStatus(
    event.status === 'enrolled'
      ? `Enrolled “${externalId}” with ${event.samples} recordings${failed}. Now press “Record & verify”.`
      : `Enrolment failed${failed}. Try again.`,
    event.status === 'enrolled' ? 'done' : 'error',
  );
}

// --------------------------------------------------------------------------------------------
// The one-time phrase
// --------------------------------------------------------------------------------------------

const ENROLMENT_PROMPT = $('prompt-text').textContent ?? '';

/**
 * Asks the backend for a one-time phrase for this user and shows it to read aloud; Voxkey checks
 * that the verification's recording says it (a replayed or pre-made recording cannot).
 * @param {string} externalId
 * @returns {Promise<{ challenge_id: string; text: string; expires_at: string }>}
 */
async function showChallenge(externalId) {
  const response = await fetch(`/api/challenge?external_id=${encodeURIComponent(externalId)}`, {
    method: 'POST',
  });
  const challenge = await response.json();
  if (!response.ok) throw new Error(challenge.message ?? `HTTP ${response.status}`);
  $('prompt').dataset.kind = 'challenge';
  $('prompt-text').textContent = challenge.text;
  return challenge;
}

/** Back to the enrolment sentence once a verification is over. */
function hideChallenge() {
  $('prompt').dataset.kind = 'enrol';
  $('prompt-text').textContent = ENROLMENT_PROMPT;
}

/**
 * Shows a verification's result (the webhook's fields) and what it means for access.
 * @param {any} event
 * @param {string} externalId
 * @param {string} [how] how the decision came, appended to the message
 */
function showVerification(event, externalId, how = '') {
  /** @type {PhraseCheck} */
  const phrase = event.phrase ?? null;
  showOutcome({
    kind: 'verify',
    result: event.result,
    score: Number(event.match_score).toFixed(3),
    deepfake: event.deepfake_detected ? 'yes' : 'no',
    phrase,
    requestUuid: event.request_uuid,
  });
  // Grant access only when verified, no deepfake was detected AND the recording says the phrase
  // shown; inconclusive means "try again".
  /** @type {Verdict} */
  const verdict = event.deepfake_detected
    ? 'deepfake'
    : event.result === 'verified' && phrase?.matched !== true
      ? 'phrase'
      : event.result === 'verified' || event.result === 'rejected'
        ? event.result
        : 'inconclusive';
  const message = {
    verified: `Verified: this is “${externalId}”.`,
    rejected: `Rejected: the voice does not match “${externalId}”.`,
    deepfake: `Deepfake suspected: access denied, the recording looks synthetic or replayed (result ${event.result}).`,
    phrase: phrase
      ? `Phrase not matched: access denied, the recording does not say “${phrase.expected}” (heard “${phrase.transcript}”); a replayed or pre-made recording cannot say a new phrase.`
      : 'Phrase not checked: access denied, Voxkey did not check the phrase.',
    inconclusive: 'Inconclusive: not enough clear speech to decide; try again.',
  }[verdict];
  setStatus(how ? `${message} ${how}` : message, 'done', verdict);
}

/**
 * @param {string} externalId
 * @param {number} seconds
 */
async function verify(externalId, seconds) {
  const challenge = await showChallenge(externalId);
  const wav = await recordWav(seconds, `Verification: read “${challenge.text}”`);
  hideChallenge();
  setStatus(
    `Recorded ${seconds} s (${Math.round(wav.length / 1024)} KiB WAV at 16 kHz); sending…`,
    'sending',
  );
  const { event } = await submitAndWait(
    'verify',
    externalId,
    wav,
    undefined,
    challenge.challenge_id,
  );
  showVerification(event, externalId);
}

// --------------------------------------------------------------------------------------------
// Verify while speaking
// --------------------------------------------------------------------------------------------

/**
 * A verification stream through the demo backend (`GET /api/verify-stream`, a WebSocket), in the
 * shape `streamVoice` sends to: audio chunks are queued until the socket opens; `result` settles
 * with Voxkey's result message, or fails with the backend's error message.
 * @param {string} externalId
 * @param {string} challengeId the one-time phrase the person reads
 * @param {(progress: { received_s: number; net_speech_s: number }) => void} onProgress
 */
function openVerificationStream(externalId, challengeId, onProgress) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new WebSocket(
    `${scheme}//${location.host}/api/verify-stream?external_id=${encodeURIComponent(externalId)}` +
      `&challenge_id=${encodeURIComponent(challengeId)}`,
  );
  socket.binaryType = 'arraybuffer';
  /** @type {(ArrayBufferView | string)[]} */
  const queued = [];
  socket.addEventListener('open', () => {
    for (const data of queued.splice(0)) socket.send(data);
  });
  /** @type {Promise<any>} */
  const result = new Promise((resolve, reject) => {
    socket.addEventListener('message', (message) => {
      const data = JSON.parse(/** @type {MessageEvent<string>} */ (message).data);
      if (data.type === 'progress') onProgress(data);
      else if (data.type === 'result') resolve(data);
      else if (data.type === 'error') reject(new Error(data.message));
    });
    // After a result or an error this changes nothing.
    socket.addEventListener('close', () =>
      reject(new Error('the connection to the demo backend closed before a result')),
    );
  });
  /** @param {ArrayBufferView | string} data */
  const transmit = (data) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(data);
    else if (socket.readyState === WebSocket.CONNECTING) queued.push(data);
  };
  return {
    /** @param {ArrayBufferView} chunk */
    send: (chunk) => transmit(chunk),
    end: () => transmit(JSON.stringify({ type: 'end' })),
    result,
    close: () => socket.close(),
  };
}

/**
 * Streams the microphone while the person reads the phrase, for `seconds` (a stream with a phrase
 * decides once it ends, so the whole phrase is heard), showing what Voxkey has heard.
 * @param {string} externalId
 * @param {number} seconds
 */
async function verifyWhileSpeaking(externalId, seconds) {
  const challenge = await showChallenge(externalId);
  setStatus(`Verifying while you speak (${seconds} s)… Read “${challenge.text}” now.`, 'streaming');
  const stream = openVerificationStream(externalId, challenge.challenge_id, (progress) =>
    setStatus(
      `Voxkey heard ${progress.received_s.toFixed(1)} s, ${progress.net_speech_s.toFixed(1)} s of it speech… Keep reading “${challenge.text}”.`,
      'streaming',
    ),
  );
  /** @type {Awaited<ReturnType<typeof streamVoice>>} */
  let sent;
  try {
    // Returns once the result is in (or after `seconds`, when it sends `end` and waits for the result).
    sent = await streamVoice(stream, {
      maxSeconds: seconds,
      onProgress: ({ peak }) => (level.value = peak),
    });
  } catch (error) {
    stream.close();
    throw error;
  } finally {
    level.value = 0;
    hideChallenge();
  }
  console.info(
    `streamed ${sent.durationSeconds} s at ${sent.captureSampleRate} Hz through the ${sent.capture}`,
  );
  const event = await stream.result;
  const early = sent.durationSeconds < seconds - 0.05;
  showVerification(
    event,
    externalId,
    `(decided ${early ? 'early, ' : ''}after ${sent.durationSeconds.toFixed(1)} s of audio)`,
  );
}

/** @param {'enrol' | 'verify' | 'verify-stream'} kind */
async function run(kind) {
  const externalId = externalIdInput.value.trim();
  if (!externalId) {
    setStatus('Enter a user id first.', 'error');
    return;
  }
  const seconds = Math.min(30, Math.max(3, Number(secondsInput.value) || 7));
  for (const button of buttons) button.disabled = true;
  showOutcome({ kind, result: '–' });
  try {
    if (kind === 'enrol') await enrol(externalId, seconds);
    else if (kind === 'verify') await verify(externalId, seconds);
    else await verifyWhileSpeaking(externalId, seconds);
  } catch (error) {
    hideChallenge();
    showOutcome({ kind, result: 'error' });
    setStatus(`Error: ${error instanceof Error ? error.message : String(error)}`, 'error');
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

$('controls').addEventListener('submit', (event) => event.preventDefault()); // Enter in a field submits nothing
enrolButton.addEventListener('click', () => void run('enrol'));
verifyButton.addEventListener('click', () => void run('verify'));
streamButton.addEventListener('click', () => void run('verify-stream'));
document.body.dataset.ready = 'true';
