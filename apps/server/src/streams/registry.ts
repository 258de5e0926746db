import type { AppDeps, AuthContext, StreamRegistry } from '../deps.js';
import { ApiError } from '../errors.js';
import { checkJobRoom } from '../services/job-admission.js';
import { requireVoiceSettings } from '../services/voice-requests.js';
import { type StreamEngine, VerificationStream } from './verification-stream.js';

/**
 * The open verification streams of this process: the per-organisation cap, and shutdown (every
 * stream finishes its decision, then closes with 1001).
 */
export function createStreamRegistry(
  deps: AppDeps,
  engine: () => StreamEngine | undefined,
): StreamRegistry {
  const perOrg = new Map<number, number>();
  const streams = new Set<VerificationStream>();
  let closing = false;

  const release = (orgId: number) => {
    const left = (perOrg.get(orgId) ?? 1) - 1;
    if (left <= 0) perOrg.delete(orgId);
    else perOrg.set(orgId, left);
  };

  return {
    /**
     * The checks a stream passes before its upgrade (after the token and the rate limit): the server
     * is not shutting down, voice processing works, a callback URL exists, the quota and the queue
     * have room, and the organisation is under its cap of open streams.
     */
    async admit(auth: Pick<AuthContext, 'orgId' | 'tokenKind'>) {
      if (closing)
        throw new ApiError('unavailable', 'The server is shutting down; connect again', {
          headers: { 'Retry-After': '1' },
        });
      await requireVoiceSettings(deps, auth.orgId);
      await checkJobRoom(deps, auth);
      const open = perOrg.get(auth.orgId) ?? 0;
      const cap = deps.config.STREAM_MAX_PER_ORG;
      if (open >= cap) {
        throw new ApiError(
          'rate_limited',
          `This organisation already has ${cap} open verification streams; end one or retry later`,
          { headers: { 'Retry-After': '1' } },
        );
      }
      perOrg.set(auth.orgId, open + 1);
      let settled = false;
      return {
        open(socket, parseStart) {
          settled = true;
          const stream = new VerificationStream({
            deps,
            auth,
            socket,
            engine: engine(),
            parseStart,
            onClosed: () => {
              streams.delete(stream);
              release(auth.orgId);
            },
          });
          streams.add(stream);
          return stream;
        },
        release() {
          if (settled) return;
          settled = true;
          release(auth.orgId);
        },
      };
    },
    count: () => streams.size,
    async shutdown(): Promise<void> {
      closing = true;
      await Promise.all([...streams].map((stream) => stream.shutdown()));
    },
  };
}
