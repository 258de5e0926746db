import { parseArgs } from 'node:util';
import { pullModel } from '@voxkey/engine';
import type { AppConfig } from '../config.js';
import type { Runtime } from '../runtime.js';
import { toInvoice } from '../repositories/billing.js';
import { closeBillingPeriod } from '../services/invoices.js';
import { printJson, UsageError } from './output.js';
import { ensureDataDir } from '../config.js';

export async function billingClosePeriod(args: string[], runtime: Runtime, config: AppConfig): Promise<void> {
  const { values } = parseArgs({ args, options: { month: { type: 'string' }, json: { type: 'boolean' } } });
  if (!values.month || !/^\d{4}-(0[1-9]|1[0-2])$/.test(values.month)) throw new UsageError('--month YYYY-MM is required');
  const invoices = await closeBillingPeriod(runtime.deps.database.db, values.month, ensureDataDir(config));
  if (values.json) printJson({ invoices: invoices.map(toInvoice) });
  else console.log(`${invoices.length} invoice(s) created for ${values.month}.`);
}

export async function modelsPull(args: string[], config: AppConfig): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const name = positionals[0];
  if (!name) throw new UsageError('Usage: voxkey models pull <name>   (names are listed in models/manifest.json)');
  const result = await pullModel(name, { modelsDir: config.VOXKEY_MODELS_DIR });
  if (values.json) printJson(result);
  else console.log(`Pulled ${name}: ${JSON.stringify(result)}`);
}
