import { getInvoice, getPlan, getSubscription, listPlans } from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const billingRouter = createRouter()
  .openapi(listPlans, handlers.plans)
  .openapi(getPlan, handlers.plan)
  .openapi(getSubscription, handlers.subscription)
  .openapi(getInvoice, handlers.invoice);
