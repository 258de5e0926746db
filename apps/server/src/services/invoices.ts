import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import {
  findInvoiceForPeriod,
  insertInvoice,
  lastInvoiceSequence,
  subscriptionsActiveBetween,
} from '../repositories/billing.js';
import { nowIso } from '../repositories/clock.js';
import { countVerificationsBetween } from '../repositories/jobs.js';

export function monthBounds(month: string): { from: string; to: string } {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!match) throw new Error(`--month must be YYYY-MM, got ${month}`);
  const year = Number(match[1]);
  const monthIndex = Number(match[2]) - 1;
  return {
    from: new Date(Date.UTC(year, monthIndex, 1)).toISOString(),
    to: new Date(Date.UTC(year, monthIndex + 1, 1)).toISOString(),
  };
}

/** When a month that has not ended yet ends; null when it has ended (only an ended month can be closed). */
export function monthStillOpenUntil(month: string, now: Date = new Date()): string | null {
  const { to } = monthBounds(month);
  return Date.parse(to) > now.getTime() ? to : null;
}

/**
 * Closes a billing month: one invoice per subscription active in it, counting the organisation's
 * verifications and charging calls beyond the plan's quota at its overage rate. Re-running the
 * same month creates nothing new (unique per subscription and period), so a month is closed only
 * once it has ended: an earlier invoice would leave the rest of its usage unbilled.
 */
export async function closeBillingPeriod(
  db: Kysely<DB>,
  month: string,
  dataDir: string,
  now: Date = new Date(),
) {
  const openUntil = monthStillOpenUntil(month, now);
  if (openUntil) throw new Error(`${month} has not ended yet (it ends at ${openUntil})`);
  const { from, to } = monthBounds(month);
  const firstDay = from.slice(0, 10);
  const lastDay = new Date(Date.parse(to) - 1).toISOString().slice(0, 10);
  const subscriptions = await subscriptionsActiveBetween(db, firstDay, lastDay);

  const created = [];
  for (const sub of subscriptions) {
    const invoice = await db.transaction().execute(async (trx) => {
      if (await findInvoiceForPeriod(trx, sub.sub_id, month)) return null;
      const verifications = await countVerificationsBetween(trx, sub.org_id, from, to);
      const overage = Math.max(0, verifications - sub.monthly_calls_included);
      const amount = Math.round(overage * Number(sub.overage_rate_gbp) * 100) / 100;
      const sequence = (await lastInvoiceSequence(trx, sub.org_id)) + 1;
      const fileRef = `invoices/${sub.org_id}/${month}-${String(sequence).padStart(4, '0')}.json`;
      const document = {
        organisation_id: sub.org_id,
        subscription_id: sub.sub_id,
        invoice_sequence: sequence,
        period: month,
        plan: sub.plan_name,
        monthly_calls_included: sub.monthly_calls_included,
        monthly_verifications: verifications,
        overage_calls: overage,
        overage_rate_gbp: Number(sub.overage_rate_gbp),
        amount_due_gbp: amount,
        issued_at: nowIso(),
      };
      const file = path.join(dataDir, fileRef);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
      return insertInvoice(trx, {
        org_id: sub.org_id,
        sub_id: sub.sub_id,
        invoice_sequence: sequence,
        period: month,
        monthly_verifications: verifications,
        overage_calls: overage,
        amount_gbp: amount,
        file_ref: fileRef,
      });
    });
    if (invoice) created.push(invoice);
  }
  return created;
}
