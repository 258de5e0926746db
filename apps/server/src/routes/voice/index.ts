import {
  createAudioCheck,
  createEnrollment,
  createVerification,
  getEnrollment,
  getVerification,
} from '@voxkey/contract';
import { createRouter } from '../../http/router.js';
import * as handlers from './handlers.js';

export const voiceRouter = createRouter()
  .openapi(createEnrollment, handlers.enrol)
  .openapi(createVerification, handlers.verify)
  .openapi(getEnrollment, handlers.enrolment)
  .openapi(getVerification, handlers.verification)
  .openapi(createAudioCheck, handlers.audioCheck);
