import { pullModel } from '@voxkey/engine';
import { z } from 'zod';
import type { AppConfig } from '../config.js';
import { ensureDataDir } from '../config.js';
import { toInvoice } from '../repositories/billing.js';
import type { Runtime } from '../runtime.js';
import { closeBillingPeriod, monthStillOpenUntil } from '../services/invoices.js';
import { JsonOption, parseOptions } from './options.js';
import { type CliIo, printJson, printLine, UsageError } from './output.js';

const ClosePeriodOptions = z.object({
  month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, '--month must be YYYY-MM'),
  json: JsonOption,
});

export async function billingClosePeriod(
  options: unknown,
  runtime: Runtime,
  config: AppConfig,
  io: CliIo,
): Promise<void> {
  const values = parseOptions(ClosePeriodOptions, options);
  const openUntil = monthStillOpenUntil(values.month);
  if (openUntil)
    throw new UsageError(
      `--month ${values.month} has not ended yet (it ends at ${openUntil}): a month is invoiced once, so closing it early would leave the rest of its usage unbilled`,
    );
  const invoices = await closeBillingPeriod(
    runtime.deps.database.db,
    values.month,
    ensureDataDir(config),
  );
  if (values.json) printJson(io, { invoices: invoices.map(toInvoice) });
  else printLine(io, `${invoices.length} invoice(s) created for ${values.month}.`);
}

export async function modelsPull(
  name: string,
  options: { json?: boolean },
  config: AppConfig,
  io: CliIo,
): Promise<void> {
  const result = await pullModel(name, { modelsDir: config.VOXKEY_MODELS_DIR });
  if (options.json) printJson(io, result);
  else
    printLine(
      io,
      result.downloaded
        ? `Downloaded ${result.name} to ${result.path} (sha256 ${result.sha256}).`
        : `${result.name} is already present and verified (${result.path}).`,
    );
}
