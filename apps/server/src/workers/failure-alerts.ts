import nodemailer from 'nodemailer';
import type { AppDeps } from '../deps.js';
import { verificationStats } from '../repositories/jobs.js';
import {
  claimFailureAlert,
  findOrganisation,
  findSettings,
} from '../repositories/organisations.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * When the organisation asked for alerts and, over the last hour, at least ALERT_MIN_VERIFICATIONS
 * verifications completed with a failure rate (rejected + inconclusive) above ALERT_FAILURE_RATE,
 * email its contact address, at most once per ALERT_COOLDOWN_HOURS (claimed atomically, so several
 * processes send one email).
 */
export async function checkFailureRate(
  deps: AppDeps,
  orgId: number,
  now = new Date(),
): Promise<boolean> {
  const { config } = deps;
  const db = deps.database.db;
  if (!config.SMTP_URL) return false;
  const settings = await findSettings(db, orgId);
  if (!settings?.alert_on_failure) return false;

  const since = new Date(now.getTime() - HOUR_MS).toISOString();
  const { total, failed } = await verificationStats(db, orgId, since);
  if (total < config.ALERT_MIN_VERIFICATIONS || failed / total <= config.ALERT_FAILURE_RATE)
    return false;

  const cooldownStart = new Date(
    now.getTime() - config.ALERT_COOLDOWN_HOURS * HOUR_MS,
  ).toISOString();
  if (!(await claimFailureAlert(db, orgId, now.toISOString(), cooldownStart))) return false;

  const org = await findOrganisation(db, orgId);
  if (!org) return false;
  const rate = Math.round((failed / total) * 100);
  await nodemailer.createTransport(config.SMTP_URL).sendMail({
    from: config.SMTP_FROM,
    to: org.email,
    subject: `Voxkey: ${rate}% of verifications failed in the last hour`,
    text: [
      `Hello ${org.name},`,
      '',
      `In the last hour ${failed} of ${total} verifications for organisation ${org.id} were rejected or inconclusive (${rate}%).`,
      `This is above the alert threshold of ${Math.round(config.ALERT_FAILURE_RATE * 100)}%.`,
      'Check your recording conditions or look for abuse. You will not get another alert for this organisation for the next ' +
        `${config.ALERT_COOLDOWN_HOURS} hours.`,
      '',
      'Turn these alerts off with settings.alert_on_failure = false.',
    ].join('\n'),
  });
  return true;
}
