import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** Names this process's claims on jobs and deliveries (host, pid, random suffix), unique across restarts. */
export function workerOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}
