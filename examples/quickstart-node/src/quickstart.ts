/**
 * Voxkey quick start: the whole enrol-then-verify flow with the SDK.
 *
 * 1. starts a tiny webhook receiver on localhost and points the organisation's callback URL at it;
 * 2. creates a predefined text (the prompt your app would show the user);
 * 3. pre-checks each enrolment recording (`audioChecks.create`: synchronous, stores nothing) and skips
 *    the ones the engine would refuse, printing their problems;
 * 4. enrols a user from the first usable recording (mode `new`) and adds the others to the same
 *    voiceprint (mode `add`), waiting for each signed `enrollment.completed` webhook;
 * 5. creates a one-time challenge (six random digits as words) for the person to read aloud, verifies
 *    the user with a recording that should say it (`challenge_id`) and prints the
 *    `verification.completed` result, whose `phrase` says whether the recording says the digits: a
 *    replayed or pre-made recording does not.
 *
 * Configuration comes from the environment (see README.md):
 *   VOXKEY_URL             the server, e.g. http://localhost:8080 (with or without /v1)
 *   VOXKEY_TOKEN           an API token of the organisation (vk_live_... or vk_trial_...)
 *   VOXKEY_ORG_ID          the organisation id
 *   VOXKEY_WEBHOOK_SECRET  the organisation's webhook signing secret (whsec_...)
 *   ENROL_AUDIO            WAV or MP3 files to enrol with, comma-separated (1 to 10; three recommended;
 *                          16 kHz or more, 3 s of speech or more each)
 *   VERIFY_AUDIO           WAV or MP3 file to verify with: the person reading the challenge's digits
 *                          (in a terminal the script shows the digits and waits for Enter while you
 *                          record it; otherwise it sends the file as it is)
 *   WEBHOOK_PORT           port of the local webhook receiver (default 3000)
 *   EXTERNAL_ID            your id for the person (default quickstart-<time>)
 *   WAIT_TIMEOUT_MS        how long to wait for each webhook (default 120000)
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import {
  createVoxkeyClient,
  readAudioFile,
  verifyWebhook,
  VoxkeyError,
  WebhookVerificationError,
  type VoxkeyEvent,
} from '@voxkey/sdk/node';

type EnrollmentEvent = Extract<VoxkeyEvent, { event_type: 'enrollment.completed' }>;
type VerificationEvent = Extract<VoxkeyEvent, { event_type: 'verification.completed' }>;

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`Missing environment variable ${name} (see examples/quickstart-node/README.md)`);
    process.exit(2);
  }
  return value;
}

const apiUrl = required('VOXKEY_URL').replace(/\/+$/, '');
const baseUrl = apiUrl.endsWith('/v1') ? apiUrl : `${apiUrl}/v1`;
const token = required('VOXKEY_TOKEN');
const orgId = Number(required('VOXKEY_ORG_ID'));
const webhookSecret = required('VOXKEY_WEBHOOK_SECRET');
// Relative paths are relative to where you ran the command (npm runs scripts in the workspace).
const enrolAudio = required('ENROL_AUDIO')
  .split(',')
  .map((file) => file.trim())
  .filter(Boolean)
  .map((file) => path.resolve(process.env.INIT_CWD ?? process.cwd(), file));
const verifyAudio = path.resolve(process.env.INIT_CWD ?? process.cwd(), required('VERIFY_AUDIO'));
// Checked before anything changes on the server: a typo should not cost a callback URL or a text.
const missingFiles = enrolAudio.filter((file) => !existsSync(file));
// In a terminal the verification recording may be made while the script waits for it.
if (!process.stdin.isTTY && !existsSync(verifyAudio)) missingFiles.push(verifyAudio);
if (missingFiles.length > 0) {
  console.error(`No such audio file: ${missingFiles.join(', ')} (ENROL_AUDIO, VERIFY_AUDIO)`);
  process.exit(2);
}
const webhookPort = Number(process.env.WEBHOOK_PORT ?? 3000);
const externalId = process.env.EXTERNAL_ID ?? `quickstart-${Date.now()}`;
const waitTimeoutMs = Number(process.env.WAIT_TIMEOUT_MS ?? 120_000);

const voxkey = createVoxkeyClient({ baseUrl, token, orgId });

// ---------------------------------------------------------------------------------------------
// A tiny webhook receiver. It verifies every call against the RAW body (re-serialised JSON would
// not match the signature), answers 204 at once, de-duplicates retries by `webhook-id`, and hands
// each event to whoever waits for its request_uuid.
// ---------------------------------------------------------------------------------------------
const seenWebhookIds = new Set<string>();
const arrived = new Map<string, VoxkeyEvent>();
const waiting = new Map<string, (event: VoxkeyEvent) => void>();

function deliver(event: VoxkeyEvent): void {
  const waiter = waiting.get(event.request_uuid);
  if (waiter) {
    waiting.delete(event.request_uuid);
    waiter(event);
  } else {
    arrived.set(event.request_uuid, event); // the webhook beat the 202 response: keep it
  }
}

async function onWebhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST' || req.url !== '/webhooks') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let event: VoxkeyEvent;
  try {
    event = verifyWebhook({
      secret: webhookSecret,
      headers: req.headers,
      body: Buffer.concat(chunks),
    });
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      console.warn(`Rejected a webhook call: ${error.reason}`);
      res.writeHead(400, { 'content-type': 'text/plain' }).end(error.reason);
      return;
    }
    throw error;
  }
  res.writeHead(204).end(); // answer quickly; Voxkey retries anything that is not 2xx
  const webhookId = String(req.headers['webhook-id']);
  if (seenWebhookIds.has(webhookId)) return; // a retry of an event we already handled
  seenWebhookIds.add(webhookId);
  deliver(event);
}

function waitForEvent(requestUuid: string, what: string): Promise<VoxkeyEvent> {
  const early = arrived.get(requestUuid);
  if (early) return Promise.resolve(early);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(requestUuid);
      reject(new Error(`No ${what} webhook for ${requestUuid} within ${waitTimeoutMs} ms`));
    }, waitTimeoutMs);
    waiting.set(requestUuid, (event) => {
      clearTimeout(timer);
      resolve(event);
    });
  });
}

async function main(): Promise<void> {
  const receiver = createServer((req, res) => {
    onWebhook(req, res).catch((error) => {
      console.error('webhook handler failed:', error);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    receiver.once('error', reject);
    receiver.listen(webhookPort, '127.0.0.1', () => resolve());
  });
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  console.log(`Webhook receiver listening on ${callbackUrl}`);

  try {
    // 1. Results are delivered to the organisation's callback URL.
    await voxkey.settings.update({ callback_url: callbackUrl });
    console.log(`Callback URL of organisation ${orgId} set to ${callbackUrl}`);

    // 2. A predefined text: the sentence your app asks the user to read. (language, text_code)
    //    is unique per organisation, so a second run reuses the text created by the first.
    const prompt = { language: 'en-UK', text_code: 1, text: 'My voice is my password, verify me.' };
    let text;
    try {
      text = await voxkey.predefinedTexts.create(prompt);
      console.log(
        `Predefined text ${text.id} created (${text.language} #${text.text_code}): "${text.text}"`,
      );
    } catch (error) {
      if (!(error instanceof VoxkeyError && error.status === 409)) throw error;
      const page = await voxkey.predefinedTexts.list({
        filter: [`language=${prompt.language}`, `text_code=${prompt.text_code}`],
      });
      text = page.results[0]!;
      console.log(
        `Predefined text ${text.id} already exists (${text.language} #${text.text_code}): "${text.text}"`,
      );
    }

    // 3. Pre-check the recordings: the answer is synchronous, so the person can record again at
    //    once instead of learning from a failed enrolment's webhook seconds later.
    const usable: Array<{ file: string; voice: string }> = [];
    for (const file of enrolAudio) {
      const voice = await readAudioFile(file);
      const check = await voxkey.audioChecks.create({ voice_data: voice });
      const measured = `${check.duration_s.toFixed(1)} s, ${check.net_speech_s.toFixed(1)} s of speech, SNR ${check.snr_db === null ? 'n/a' : `${check.snr_db.toFixed(1)} dB`}`;
      if (check.usable) {
        console.log(`Pre-check of ${path.basename(file)}: usable (${measured})`);
        usable.push({ file, voice });
      } else {
        const problems = check.problems.map((p) => `${p.code} (${p.message})`).join('; ');
        console.log(
          `Pre-check of ${path.basename(file)}: NOT usable, skipped (${measured}): ${problems}`,
        );
      }
    }
    if (usable.length === 0)
      throw new Error('No usable enrolment recording: record again with more speech, less noise');

    // 4. Enrol with the first recording (mode `new`), then add the others to the same voiceprint
    //    (mode `add`). The server answers 202 at once; each result arrives as a webhook, and the
    //    next recording is sent after it (one enrolment per person is processed at a time).
    let enrolment: EnrollmentEvent | undefined;
    for (const { file, voice } of usable) {
      const mode = enrolment ? 'add' : 'new';
      const enrolRequestUuid = randomUUID(); // keep it to retry safely after a crash
      const eventOfEnrolment = waitForEvent(enrolRequestUuid, 'enrollment.completed');
      await voxkey.enrollments.create({
        request_uuid: enrolRequestUuid,
        external_id: externalId,
        voice_data: voice,
        language: text.language,
        mode,
      });
      console.log(
        `Enrolment (${mode}) of "${externalId}" with ${path.basename(file)} accepted (request_uuid ${enrolRequestUuid}); waiting for the webhook...`,
      );
      const event = (await eventOfEnrolment) as EnrollmentEvent;
      console.log(`enrollment.completed: ${JSON.stringify(event)}`);
      if (event.status !== 'enrolled') {
        // Nothing was stored: a failed `add` leaves the voiceprint as it was, a failed `new` leaves
        // no user (e.g. deepfake_detected), and the next recording is tried.
        console.log(
          `Enrolling ${path.basename(file)} failed (${event.failure_reason}); the voiceprint holds ${event.samples} recording(s)`,
        );
        continue;
      }
      enrolment = event;
    }
    if (!enrolment) throw new Error('Enrolment failed with every recording');
    console.log(
      `Enrolled "${externalId}" as user ${enrolment!.user_id} with ${enrolment!.samples} recording(s) (quality of the last ${enrolment!.quality_score})`,
    );

    // 5. Verify with a one-time phrase: show the challenge's text, record the person reading it,
    //    and send the recording with its challenge_id. A challenge is used once and expires (by
    //    default after 120 s), so a recording made earlier cannot say it.
    const challenge = await voxkey.challenges.create({ external_id: externalId });
    console.log(
      `Challenge for "${externalId}": read aloud "${challenge.text}" (valid until ${challenge.expires_at})`,
    );
    if (process.stdin.isTTY) {
      const prompt = createInterface({ input: process.stdin, output: process.stdout });
      await prompt.question(
        `Record the person reading it into ${path.basename(verifyAudio)}, then press Enter... `,
      );
      prompt.close();
    }
    const verifyRequestUuid = randomUUID();
    const eventOfVerification = waitForEvent(verifyRequestUuid, 'verification.completed');
    await voxkey.verifications.create({
      request_uuid: verifyRequestUuid,
      external_id: externalId,
      voice_data: await readAudioFile(verifyAudio),
      challenge_id: challenge.challenge_id,
    });
    console.log(
      `Verification of "${externalId}" accepted (request_uuid ${verifyRequestUuid}); waiting for the webhook...`,
    );
    const verification = (await eventOfVerification) as VerificationEvent;
    console.log(`verification.completed: ${JSON.stringify(verification)}`);

    const phrase = verification.phrase;
    console.log(
      phrase
        ? `Phrase: expected "${phrase.expected}", heard "${phrase.transcript}" (match ${phrase.match_score.toFixed(2)}) -> ${phrase.matched ? 'matched' : 'NOT matched'}`
        : 'Phrase: not checked',
    );

    // Treat `inconclusive` as a rejection, and reject whenever a deepfake was detected or the
    // recording does not say the challenge (a replayed or pre-made recording).
    const accepted =
      verification.result === 'verified' &&
      !verification.deepfake_detected &&
      phrase?.matched === true;
    console.log(
      `Result: ${verification.result} (match score ${verification.match_score.toFixed(3)}, ` +
        `deepfake detected: ${verification.deepfake_detected ? 'yes' : 'no'}) -> ${accepted ? 'ACCESS GRANTED' : 'ACCESS DENIED'}`,
    );
  } finally {
    receiver.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof VoxkeyError) {
    console.error(`Voxkey API error ${error.status}: ${error.message}`);
    for (const e of error.errors) console.error(`  ${e.field}: ${e.message}`);
  } else {
    console.error(error instanceof Error ? error.message : error);
  }
  process.exit(1);
});
