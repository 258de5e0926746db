/**
 * Voxkey quick start: the whole enrol-then-verify flow with the SDK.
 *
 * 1. starts a tiny webhook receiver on localhost and points the organisation's callback URL at it;
 * 2. creates a predefined text (the prompt your app would show the user);
 * 3. enrols a user from a recording and waits for the signed `enrollment.completed` webhook;
 * 4. verifies the user with a second recording and prints the `verification.completed` result.
 *
 * Configuration comes from the environment (see README.md):
 *   VOXKEY_URL             the server, e.g. http://localhost:8080 (with or without /v1)
 *   VOXKEY_TOKEN           an API token of the organisation (vk_live_... or vk_trial_...)
 *   VOXKEY_ORG_ID          the organisation id
 *   VOXKEY_WEBHOOK_SECRET  the organisation's webhook signing secret (whsec_...)
 *   ENROL_AUDIO            WAV or MP3 file to enrol with (16 kHz or more, 3 s of speech or more)
 *   VERIFY_AUDIO           WAV or MP3 file to verify with
 *   WEBHOOK_PORT           port of the local webhook receiver (default 3000)
 *   EXTERNAL_ID            your id for the person (default quickstart-<time>)
 *   WAIT_TIMEOUT_MS        how long to wait for each webhook (default 120000)
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
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
const enrolAudio = path.resolve(process.env.INIT_CWD ?? process.cwd(), required('ENROL_AUDIO'));
const verifyAudio = path.resolve(process.env.INIT_CWD ?? process.cwd(), required('VERIFY_AUDIO'));
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
    event = verifyWebhook({ secret: webhookSecret, headers: req.headers, body: Buffer.concat(chunks) });
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
      console.log(`Predefined text ${text.id} created (${text.language} #${text.text_code}): "${text.text}"`);
    } catch (error) {
      if (!(error instanceof VoxkeyError && error.status === 409)) throw error;
      const page = await voxkey.predefinedTexts.list({ filter: [`language=${prompt.language}`, `text_code=${prompt.text_code}`] });
      text = page.results[0]!;
      console.log(`Predefined text ${text.id} already exists (${text.language} #${text.text_code}): "${text.text}"`);
    }

    // 3. Enrol. The server answers 202 at once; the result arrives as a webhook.
    const enrolRequestUuid = randomUUID(); // keep it to retry safely after a crash
    const eventOfEnrolment = waitForEvent(enrolRequestUuid, 'enrollment.completed');
    await voxkey.enrollments.create({
      request_uuid: enrolRequestUuid,
      external_id: externalId,
      voice_data: await readAudioFile(enrolAudio),
      language: text.language,
    });
    console.log(`Enrolment of "${externalId}" accepted (request_uuid ${enrolRequestUuid}); waiting for the webhook...`);
    const enrolment = (await eventOfEnrolment) as EnrollmentEvent;
    console.log(`enrollment.completed: ${JSON.stringify(enrolment)}`);
    if (enrolment.status !== 'enrolled') {
      throw new Error(`Enrolment failed: ${enrolment.failure_reason}`);
    }
    console.log(`Enrolled "${externalId}" as user ${enrolment.user_id} (quality ${enrolment.quality_score})`);

    // 4. Verify with a second recording.
    const verifyRequestUuid = randomUUID();
    const eventOfVerification = waitForEvent(verifyRequestUuid, 'verification.completed');
    await voxkey.verifications.create({
      request_uuid: verifyRequestUuid,
      external_id: externalId,
      voice_data: await readAudioFile(verifyAudio),
    });
    console.log(`Verification of "${externalId}" accepted (request_uuid ${verifyRequestUuid}); waiting for the webhook...`);
    const verification = (await eventOfVerification) as VerificationEvent;
    console.log(`verification.completed: ${JSON.stringify(verification)}`);

    // Treat `inconclusive` as a rejection, and reject whenever a deepfake was detected.
    const accepted = verification.result === 'verified' && !verification.deepfake_detected;
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
