import {
  getInvoice,
  getPlan,
  getSubscription,
  listInvoices,
  listPlans,
  listSubscriptions,
} from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const billingRouter = createRouter()
  .openapi(listPlans, handlers.plans)
  .openapi(getPlan, handlers.plan)
  .openapi(listSubscriptions, handlers.subscriptions)
  .openapi(getSubscription, handlers.subscription)
  .openapi(listInvoices, handlers.invoices)
  .openapi(getInvoice, handlers.invoice);
