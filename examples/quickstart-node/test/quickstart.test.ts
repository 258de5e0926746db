/**
 * Runs `src/quickstart.ts` as a child process against a real Voxkey server process (fresh SQLite
 * database, organisation from `voxkey org create`), enrolling and verifying with real recordings
 * from `../shared/datasets` converted to WAV. Skipped with a notice when the data set is absent.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseModels,
  datasetPresentFor,
  pickSpeakers,
  startServer,
  toWav,
  type ServerHandle,
} from '../../test-support/example-server.js';

const EXAMPLE_DIR = fileURLToPath(new URL('..', import.meta.url));

const HAS_DATASET = datasetPresentFor(
  import.meta.url,
  'quickstart against a real server with real recordings',
);

function runQuickstart(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/quickstart.ts'], {
      cwd: EXAMPLE_DIR,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

function jsonLines(output: string, label: string): any[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith(`${label}: {`))
    .map((l) => JSON.parse(l.slice(label.length + 2)));
}

function jsonAfter(output: string, label: string): any {
  const line = output.split('\n').find((l) => l.startsWith(`${label}: {`));
  if (!line) throw new Error(`no "${label}" line in the output:\n${output}`);
  return JSON.parse(line.slice(label.length + 2));
}

describe('quickstart-node', () => {
  it('exits 2 naming the missing variable when unconfigured', async () => {
    const { code, output } = await runQuickstart({});
    expect(code).toBe(2);
    expect(output).toContain('Missing environment variable VOXKEY_URL');
  });

  it('exits 2 naming a missing audio file before it calls the server', async () => {
    const { code, output } = await runQuickstart({
      VOXKEY_URL: 'http://127.0.0.1:9',
      VOXKEY_TOKEN: 'vk_trial_x',
      VOXKEY_ORG_ID: '1',
      VOXKEY_WEBHOOK_SECRET: 'whsec_x',
      ENROL_AUDIO: 'nope-1.wav',
      VERIFY_AUDIO: 'nope-2.wav',
    });
    expect(code).toBe(2);
    expect(output).toContain(`No such audio file: ${path.join(EXAMPLE_DIR, 'nope-1.wav')}`);
    expect(output).toContain('nope-2.wav');
    expect(output).not.toMatch(/callback|ECONNREFUSED/i);
  });

  describe.skipIf(!HAS_DATASET)('against a real server with real recordings', () => {
    const models = chooseModels();
    let server: ServerHandle;
    let audioDir: string;
    let enrolWavs: string[];
    let verifyWav: string;

    beforeAll(async () => {
      console.info(`quickstart.test.ts: models: ${models.names}`);
      const { a, speakers } = pickSpeakers(4);
      console.info(
        `quickstart.test.ts: speaker ${speakers[0]} (commonvoice dev): enrol ${a
          .slice(0, 3)
          .map((f) => path.basename(f))
          .join(', ')}, verify ${path.basename(a[3]!)}`,
      );
      audioDir = mkdtempSync(path.join(tmpdir(), 'voxkey-quickstart-audio-'));
      enrolWavs = [];
      for (const [i, clip] of a.slice(0, 3).entries())
        enrolWavs.push(await toWav(clip, path.join(audioDir, `enrol-${i + 1}.wav`)));
      // A 1.5 s recording: the pre-check must flag it, and the quick start must skip it.
      enrolWavs.push(await toWav(a[0]!, path.join(audioDir, 'too-short.wav'), 1.5));
      verifyWav = await toWav(a[3]!, path.join(audioDir, 'verify.wav'));
      server = await startServer(models.dir);
    });

    afterAll(async () => {
      await server?.stop();
      if (audioDir) rmSync(audioDir, { recursive: true, force: true });
    });

    it('pre-checks the recordings, enrols with three (new, add, add), receives the signed webhooks and prints the verification result', async () => {
      const { code, output } = await runQuickstart({
        VOXKEY_URL: server.baseUrl.replace(/\/v1$/, ''),
        VOXKEY_TOKEN: server.token,
        VOXKEY_ORG_ID: String(server.orgId),
        VOXKEY_WEBHOOK_SECRET: server.webhookSecret,
        ENROL_AUDIO: enrolWavs.join(','),
        VERIFY_AUDIO: verifyWav,
        WEBHOOK_PORT: '0',
        EXTERNAL_ID: 'quickstart-alice',
      });
      console.info(`quickstart output:\n${output}`);
      expect(code, `${output}\n--- server ---\n${server.output().slice(-4000)}`).toBe(0);

      expect(output).toMatch(
        /Callback URL of organisation \d+ set to http:\/\/127\.0\.0\.1:\d+\/webhooks/,
      );
      expect(output).toMatch(/Predefined text \d+ created \(en-UK #1\)/);

      expect(output).toMatch(
        /^Pre-check of too-short\.wav: NOT usable, skipped \(1\.5 s, .*audio_too_short/m,
      );
      const usable = output
        .split('\n')
        .filter((l) => /^Pre-check of enrol-\d\.wav: usable/.test(l)).length;
      console.info(
        `quickstart.test.ts: ${usable} of the 3 enrolment recordings passed the pre-check`,
      );
      expect(usable).toBeGreaterThan(0);
      const enrolments = jsonLines(output, 'enrollment.completed');
      expect(enrolments).toHaveLength(usable);
      const enrolled = enrolments.filter((e) => e.status === 'enrolled');
      for (const failed of enrolments.filter((e) => e.status !== 'enrolled')) {
        console.warn(
          `quickstart.test.ts: an enrolment recording failed with ${failed.failure_reason} (deepfake_score ${failed.deepfake_score}); nothing was stored`,
        );
        expect(failed).toMatchObject({
          user_id: null,
          samples: enrolled.filter((e) => Date.parse(e.created_at) < Date.parse(failed.created_at))
            .length,
        });
      }
      expect(enrolled.length).toBeGreaterThan(0);
      expect(enrolled[0]).toMatchObject({
        event_type: 'enrollment.completed',
        external_id: 'quickstart-alice',
        failure_reason: null,
        mode: 'new',
        samples: 1,
      });
      expect(enrolled[0].user_id).toBeGreaterThan(0);
      enrolled
        .slice(1)
        .forEach((e, i) =>
          expect(e).toMatchObject({ mode: 'add', user_id: enrolled[0].user_id, samples: i + 2 }),
        );
      expect(output).toContain(`with ${enrolled.length} recording(s)`);

      const challenge = /^Challenge for "quickstart-alice": read aloud "([a-z ]+)"/m.exec(output);
      expect(challenge?.[1]?.split(' '), output).toHaveLength(6);
      const verification = jsonAfter(output, 'verification.completed');
      expect(verification).toMatchObject({
        event_type: 'verification.completed',
        external_id: 'quickstart-alice',
      });
      // The verification recording was made before the challenge existed: it cannot say its digits.
      expect(verification.phrase).toMatchObject({ expected: challenge![1], matched: false });
      expect(output).toMatch(
        /^Phrase: expected "[a-z ]+", heard ".*" \(match \d\.\d{2}\) -> NOT matched$/m,
      );
      expect(output).toMatch(/-> ACCESS DENIED$/m);
      expect(['verified', 'rejected', 'inconclusive']).toContain(verification.result);
      expect(verification.match_score).toBeGreaterThanOrEqual(0);
      expect(verification.match_score).toBeLessThanOrEqual(1);
      expect(typeof verification.deepfake_detected).toBe('boolean');
      expect(output).toMatch(
        /^Result: (verified|rejected|inconclusive) \(match score \d\.\d{3}, deepfake detected: (yes|no)\) -> ACCESS (GRANTED|DENIED)$/m,
      );

      if (models.real) {
        // Two recordings of one speaker: with the trained models this must be a match.
        expect(verification.result, `same speaker, models ${models.names}`).toBe('verified');
        if (verification.deepfake_detected)
          console.warn('quickstart.test.ts: a bona fide recording was flagged as a deepfake');
      } else {
        console.warn(
          `quickstart.test.ts: ${models.names}; the same-speaker result (${verification.result}, score ${verification.match_score}) is not checked`,
        );
      }
    });
  });
});
