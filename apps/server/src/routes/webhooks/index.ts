import {
  listWebhookDeliveries,
  redeliverWebhook,
  rotateWebhookSecret,
  sendWebhookTest,
} from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const webhooksRouter = createRouter()
  .openapi(rotateWebhookSecret, handlers.rotateSecret)
  .openapi(listWebhookDeliveries, handlers.deliveries)
  .openapi(redeliverWebhook, handlers.redeliver)
  .openapi(sendWebhookTest, handlers.sendTest);
