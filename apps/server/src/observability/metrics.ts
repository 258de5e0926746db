import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** One registry per process (and per test app), so nothing is shared through globals. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'voxkey_' });
  const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  return {
    registry,
    httpRequests: new Counter({
      name: 'voxkey_http_requests_total',
      help: 'HTTP requests by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'voxkey_http_request_duration_seconds',
      help: 'HTTP request latency by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: durationBuckets,
      registers: [registry],
    }),
    jobsProcessed: new Counter({
      name: 'voxkey_jobs_processed_total',
      help: 'Jobs finished by this process, by kind and outcome.',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    jobLatency: new Histogram({
      name: 'voxkey_job_latency_seconds',
      help: 'From request receipt to recorded result.',
      labelNames: ['kind'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    inferenceStage: new Histogram({
      name: 'voxkey_inference_stage_seconds',
      help: 'Engine time per stage (decode, resample, vad, fbank, embed, spoof, total).',
      labelNames: ['stage'],
      buckets: durationBuckets,
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'voxkey_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, pending = will retry, failed = gave up or 410).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    webhookRetries: new Counter({
      name: 'voxkey_webhook_retries_total',
      help: 'Attempts after the first one.',
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'voxkey_rate_limited_total',
      help: 'Requests refused by a rate limit, by scope.',
      labelNames: ['scope'],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'voxkey_job_queue_depth',
      help: 'Unfinished jobs in the shared queue, by status.',
      labelNames: ['status'],
      registers: [registry],
    }),
    queueOldestAge: new Gauge({
      name: 'voxkey_job_queue_oldest_age_seconds',
      help: 'Age of the oldest queued job.',
      registers: [registry],
    }),
    poolUtilization: new Gauge({
      name: 'voxkey_engine_pool_utilization',
      help: 'Piscina pool utilisation (0..1) in this process.',
      registers: [registry],
    }),
    voiceprintUpgrades: new Counter({
      name: 'voxkey_voiceprint_upgrade_samples_total',
      help: 'Default-speaker-model samples added to voiceprints of an older model by verified verifications, by the model they were scored with.',
      labelNames: ['from_model', 'to_model'],
      registers: [registry],
    }),
    poolQueue: new Gauge({
      name: 'voxkey_engine_pool_queue_size',
      help: 'Tasks waiting for an engine thread in this process.',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
